"""`perfmodel corpus ...`: build the labeled code corpus and locate the source of frames."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from perfmodel.cli import options
from perfmodel.errors import PerfmodelError
from perfmodel.extras import require_extra

# The corpus builder and source locator (tree-sitter grammars) are imported by the commands:
# every `perfmodel` invocation imports this module to build the CLI.
if TYPE_CHECKING:
    from perfmodel.embed.source.roots import SourceRoot


corpus_app = typer.Typer(
    name="corpus",
    help="Labeled code corpora for the resource models, and source lookup for stack frames.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _fail(message: str) -> PerfmodelError:
    """The error to raise for bad input; the CLI's boundary prints it and exits 2."""
    return PerfmodelError(message)


def _parse_root_overrides(specs: list[str]) -> dict[str, list[Path]]:
    from perfmodel.embed.source.roots import root_from_spec

    out: dict[str, list[Path]] = {}
    for spec in specs:
        if "=" not in spec:
            raise _fail(
                f"--root {spec!r}: expected NAME=PATH (e.g. jdk=/usr/lib/jvm/x/lib/src.zip)"
            )
        try:
            root = root_from_spec(spec)
        except (FileNotFoundError, ValueError) as e:
            raise _fail(str(e)) from None
        out.setdefault(root.name, []).append(root.path)
    return out


@corpus_app.command("build")
def build_command(
    manifest: Annotated[
        list[Path] | None,
        typer.Option(
            "--manifest",
            "-m",
            help="Manifest directory or files (labels.toml must be among or beside them).",
        ),
    ] = None,
    root: Annotated[
        list[str] | None,
        typer.Option(
            "--root",
            "-r",
            help="NAME=PATH: where a root named in the manifests lives (jdk, python-stdlib, "
            "site-packages, or your own); repeatable; overrides the discovered one.",
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            parser=options.output_path,
            help="Output directory (files of the same name there are replaced).",
        ),
    ] = Path("corpora/build/v1"),
    split: Annotated[
        Path,
        typer.Option(
            "--split", help="Package split file: read, extended with new packages, written back."
        ),
    ] = Path("corpora/split.json"),
    write_split: Annotated[
        bool,
        typer.Option(
            "--write-split/--no-write-split", help="Write new package assignments back to --split."
        ),
    ] = True,
    jobs: Annotated[
        int, typer.Option("--jobs", "-j", min=1, max=options.WORKERS_MAX, help="Worker processes.")
    ] = min(os.cpu_count() or 1, 8),
    as_json: Annotated[bool, typer.Option("--json", help="Print the stats as JSON.")] = False,
) -> None:
    """Extract, label, deduplicate and split functions from installed sources."""
    require_extra("train", "perfmodel corpus build")
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from perfmodel.embed.corpus.builder import BuildConfig, BuildError, build_corpus
    from perfmodel.embed.corpus.manifest import ManifestError
    from perfmodel.report import renderer

    if root is None:
        root = []
    if manifest is None:
        manifest = [Path("corpora/manifests")]
    overrides = _parse_root_overrides(root)
    config = BuildConfig(
        manifests=manifest,
        out=out,
        split_file=split,
        roots=overrides,
        jobs=jobs,
        write_split=write_split,
    )
    console = Console(stderr=True)
    try:
        with Progress(
            TextColumn("[bold]extracting"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("files"),
            TimeElapsedColumn(),
            console=console,
            disable=as_json,
        ) as progress:
            task = progress.add_task("files", total=None)

            def report(done: int, total: int) -> None:
                progress.update(task, completed=done, total=total)

            result = build_corpus(config, progress=report)
    except (ManifestError, BuildError) as e:
        raise _fail(str(e)) from None
    except ValueError as e:  # a malformed split file
        raise _fail(str(e)) from None
    if as_json:
        renderer("json").corpus_stats(result, sys.stdout, split=split)
        return
    renderer("text").corpus_stats(result, sys.stderr, split=split)
    typer.echo(f"wrote {len(result.records)} functions to {out} in {result.seconds:.0f} s")


def _locator_roots(specs: list[str], defaults: bool) -> list[SourceRoot]:
    from perfmodel.embed.source.roots import default_roots, root_from_spec

    extra: list[SourceRoot] = []
    for spec in specs:
        try:
            extra.append(root_from_spec(spec))
        except (FileNotFoundError, ValueError) as e:
            raise _fail(str(e)) from None
    return extra + (default_roots() if defaults else [])


@corpus_app.command("locate")
def locate_command(
    frames: Annotated[
        list[str], typer.Argument(help="Frames as JFR, a Java stack trace or py-spy print them.")
    ],
    root: Annotated[
        list[str] | None,
        typer.Option(
            "--root",
            "-r",
            help="Extra source root (dir, src.zip, *-sources.jar; NAME=PATH or PATH), "
            "searched before the defaults; repeatable.",
        ),
    ] = None,
    defaults: Annotated[
        bool,
        typer.Option(
            "--default-roots/--no-default-roots",
            help="Also search the JDK src.zip, Python stdlib and site-packages.",
        ),
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of results.")] = False,
    ast: Annotated[bool, typer.Option("--ast", help="Include the AST in JSON output.")] = False,
) -> None:
    """Show the source and doc the locator finds for each frame (for debugging attribution)."""
    require_extra("models", "perfmodel corpus locate")
    from perfmodel.embed.source.locator import SourceLocator
    from perfmodel.report import renderer

    if root is None:
        root = []
    roots = _locator_roots(root, defaults)
    with SourceLocator(roots) as locator:
        results = [locator.locate(f) for f in frames]
    renderer("json" if as_json else "text").located_sources(results, sys.stdout, ast=ast)


if __name__ == "__main__":  # `python -m perfmodel.cli.corpus build` before it is mounted
    corpus_app()
