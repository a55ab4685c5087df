"""`perfmodel train` and `perfmodel classify`: the resource models from the command line."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from perfmodel.atomic import write_atomically
from perfmodel.cli import options
from perfmodel.errors import PerfmodelError
from perfmodel.extras import require_extra

_SOURCE_SUFFIXES = (".java", ".scala", ".py")


def _fail(message: str) -> PerfmodelError:
    """The error to raise for bad input; the CLI's boundary prints it and exits 2."""
    return PerfmodelError(message)


def _is_source_file(arg: str) -> bool:
    p = Path(arg)
    return arg.endswith(_SOURCE_SUFFIXES) and p.is_file()


def register(app: typer.Typer) -> None:
    """Add ``train`` and ``classify`` to ``app``."""

    @app.command("train")
    def train_command(
        corpus: Path = typer.Argument(
            ..., help="Corpus build directory (e.g. corpora/build/v1) or its functions.parquet."
        ),
        out: Path | None = typer.Option(
            None,
            "--out",
            parser=options.output_path,
            help="Directory for weights and config (default: the shipped models, "
            "perfmodel/embed/models, which this replaces).",
        ),
        card: Path | None = typer.Option(
            None,
            "--card",
            parser=options.output_path,
            help="Model card to write (default: OUT/README.md).",
        ),
        epochs: int | None = typer.Option(
            None, "--epochs", min=1, max=options.COUNT_MAX, help="Code-model epochs."
        ),
        doc_epochs: int | None = typer.Option(
            None, "--doc-epochs", min=1, max=options.COUNT_MAX, help="Doc-model epochs."
        ),
        seed: int | None = typer.Option(
            None, "--seed", min=0, max=options.SEED_MAX, help="Random seed (default 13)."
        ),
        folds: int | None = typer.Option(
            None,
            "--folds",
            min=2,
            max=1000,
            help="Folds (by package) over the training packages whose out-of-fold predictions "
            "choose the epoch counts and the heads' weights (default 3).",
        ),
        threads: int | None = typer.Option(
            None,
            "--threads",
            min=1,
            max=options.WORKERS_MAX,
            help="Torch threads (default 1: the models are many small sequential ops, and a "
            "second OpenMP thread slows them down on a busy machine).",
        ),
        tiny: bool = typer.Option(False, "--tiny", help="Tiny configuration (tests, smoke runs)."),
        limit: int | None = typer.Option(
            None, "--limit", min=10, max=options.ID_MAX, help="Use only N functions."
        ),
    ) -> None:
        """Train the code and doc models on a corpus, evaluate them on its held-out
        packages, and save weights, metrics and the model card."""
        require_extra("train", "perfmodel train")
        from dataclasses import replace

        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        from perfmodel.embed import SHIPPED_MODELS
        from perfmodel.embed.card import render_card
        from perfmodel.embed.train import train
        from perfmodel.embed.train_data import TrainConfig
        from perfmodel.report import renderer

        config = TrainConfig.tiny() if tiny else TrainConfig()
        overrides: dict[str, Any] = {
            k: v
            for k, v in (
                ("epochs", epochs),
                ("doc_epochs", doc_epochs),
                ("seed", seed),
                ("folds", folds),
                ("threads", threads),
                ("limit", limit),
            )
            if v is not None
        }
        config = replace(config, **overrides)
        if not corpus.exists():
            raise _fail(f"corpus {corpus} does not exist; build it with scripts/corpus_build.sh")
        console = Console(stderr=True)
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        ) as bar:
            task = bar.add_task("starting", total=1)

            def progress(stage: str, done: int, total: int) -> None:
                bar.update(task, description=stage, completed=done, total=max(total, 1))

            try:
                result = train(corpus, out or SHIPPED_MODELS, config, progress)
            except (ValueError, OSError) as exc:
                raise _fail(f"cannot train on {corpus}: {exc}") from None
        argv = ["perfmodel train", str(corpus)]
        if out is not None:
            argv += ["--out", str(out)]
        argv += [f"--{k.replace('_', '-')} {v}" for k, v in overrides.items()]
        if tiny:
            argv.append("--tiny")
        target = out or SHIPPED_MODELS
        card_path = card or target / "README.md"
        shown = "perfmodel/embed/models" if out is None else str(out)
        write_atomically(card_path, render_card(result.bundle.meta, " ".join(argv), shown))
        renderer("text").training(result, sys.stdout)
        Console().print(f"saved {target}/ and {card_path}")

    @app.command("classify")
    def classify_command(
        targets: list[str] = typer.Argument(
            ...,
            help="Stack frames as JFR/py-spy print them (java.net.SocketInputStream.read, "
            "'recv (socket.py:123)') or Java/Scala/Python source files.",
        ),
        as_json: bool = typer.Option(False, "--json", help="Print a JSON list."),
        explain: bool = typer.Option(
            False, "--explain", help="Also show the source and doc found, and each model's vector."
        ),
        models: Path | None = typer.Option(
            None, "--models", help="Model directory (default: the shipped models)."
        ),
        threads: int = typer.Option(
            1,
            "--threads",
            min=1,
            max=options.WORKERS_MAX,
            help="Torch threads for inference (1 is fastest on a busy "
            "machine: the models are many small sequential ops).",
        ),
        root: list[str] = typer.Option(
            [],
            "--root",
            help="Extra source root NAME=PATH or PATH (directory, src.zip, "
            "*-sources.jar); repeatable. The JDK, stdlib and site-packages are always searched.",
        ),
    ) -> None:
        """Resource vector (cpu/disk/network...) of each frame or of each function in a file."""
        require_extra("models", "perfmodel classify")
        import torch

        from perfmodel.embed.classifier import load_classifier
        from perfmodel.report import renderer

        torch.set_num_threads(threads)
        from perfmodel.embed.source.roots import default_roots, root_from_spec

        try:
            roots = [root_from_spec(r) for r in root] + default_roots() if root else None
        except (FileNotFoundError, ValueError) as exc:
            raise _fail(str(exc)) from None
        clf = load_classifier(models, roots=roots)
        results = []
        try:
            frames = [t for t in targets if not _is_source_file(t)]
            by_frame = dict(zip(frames, clf.classify_frames(frames), strict=True))
            for t in targets:
                if _is_source_file(t):
                    found = clf.classify_source_file(Path(t))
                    if not found:
                        raise _fail(f"{t}: no function found to classify (not parseable source?)")
                    results.extend(found)
                else:
                    results.append(by_frame[t])
        except OSError as exc:
            raise _fail(f"cannot read source: {exc}") from None
        finally:
            clf.close()
        renderer("json" if as_json else "text").classifications(
            results, sys.stdout, classes=clf.classes, explain=explain
        )
