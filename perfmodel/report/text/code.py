"""The text forms of the code models' and the corpus's answers: classified frames
(``perfmodel classify``), a training run's scores (``perfmodel train``), located sources
(``perfmodel corpus locate``) and corpus statistics (``perfmodel corpus build``). Frames,
paths and source are data: never read as markup."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from perfmodel.embed.classifier import Classification
    from perfmodel.embed.corpus.builder import BuildResult
    from perfmodel.embed.source.locator import LocatedSource
    from perfmodel.embed.train import TrainResult

MAX_DOC_CHARS = 200


def render_classifications(
    results: Sequence[Classification],
    console: Console,
    classes: Sequence[str],
    explain: bool,
) -> None:
    """A table of vectors; with ``explain``, each frame's source, doc and both models'."""
    table = Table()
    table.add_column("frame / function", overflow="fold")
    table.add_column("label")
    for c in classes:
        table.add_column(c, justify="right")
    table.add_column("source")
    for r in results:
        table.add_row(
            escape(r.frame),  # a frame name is data: "[...]" in it is not markup
            r.label,
            *(f"{r.vector[c]:.2f}" for c in classes),
            "found" if r.source_found else "name only",
        )
    console.print(table)
    if not explain:
        return
    for r in results:
        console.print(f"[bold]{escape(r.frame)}[/]", highlight=False)
        for k in ("path", "line", "note"):
            if r.explain.get(k) is not None:
                console.print(f"  {k}: {r.explain[k]}", highlight=False, markup=False)
        doc = r.explain.get("doc") or ""
        console.print(
            f"  doc: {doc[:MAX_DOC_CHARS] + ('...' if len(doc) > MAX_DOC_CHARS else '') or '-'}",
            highlight=False,
            markup=False,
        )
        code = ", ".join(f"{k} {v:.2f}" for k, v in r.code_vector.items())
        console.print(f"  code model: {code}", highlight=False)
        if r.doc_vector is not None:
            docv = ", ".join(f"{k} {v:.2f}" for k, v in r.doc_vector.items())
            console.print(f"  doc model: {docv}", highlight=False)


def render_training(result: TrainResult, console: Console) -> None:
    """Each model's macro-F1 on the held-out packages, and how long training took."""
    table = Table(title=f"held-out macro-F1 ({result.seconds:.0f} s)")
    table.add_column("model")
    table.add_column("macro-F1", justify="right")
    for name, m in result.metrics["test"].items():
        table.add_row(name, f"{m['macro_f1']:.3f}")
    console.print(table)


def render_located(results: Sequence[LocatedSource], console: Console) -> None:
    """Each frame as plain "key value" lines, then its code."""
    for loc in results:
        # Plain lines, soft-wrapped: a table would break long paths and frames mid-word on
        # an 80-column (or piped) terminal, and users copy these into an editor.
        rows: list[tuple[str, str]] = [
            ("frame", escape(loc.frame)),
            ("name", escape(loc.qualified_name)),
            ("language", loc.language),
            (
                "source",
                "[green]found[/]" if loc.source_found else "[yellow]not found[/] (name only)",
            ),
        ]
        if loc.source_found:
            rows.append(("function", escape(loc.source_name or "")))
            rows.append(("path", escape(f"{loc.path}:{loc.line_start}-{loc.line_end}")))
        rows.append(("tokens", escape(" ".join(loc.name_tokens))))
        rows.append(("note", escape(loc.note)))
        if loc.doc:
            rows.append(("doc", escape(loc.doc)))
        for key, value in rows:
            console.print(f"[bold]{key:<9}[/] {value}", soft_wrap=True, highlight=False)
        if loc.code:
            console.print(loc.code, markup=False, highlight=False, soft_wrap=True)
        console.print()


def render_corpus_stats(result: BuildResult, console: Console, split: Path) -> None:
    """The corpus's statistics (Markdown tables) and the packages newly assigned a side."""
    # Imported here: the corpus package pulls in the extractors (tree-sitter), which every
    # other text rendering would otherwise load.
    from perfmodel.embed.corpus.stats import stats_markdown

    console.print(stats_markdown(result.stats), markup=False, highlight=False)
    if result.new_packages:
        console.print(f"{len(result.new_packages)} new package(s) assigned in {split}")
