"""Corpus statistics: what the corpus contains and what was left out, as JSON and Markdown."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Any

from perfmodel.embed.corpus.dataset import CorpusRecord


def compute_stats(
    records: Sequence[CorpusRecord], skipped: Counter[str] | None = None, files_parsed: int = 0
) -> dict[str, Any]:
    """Counts per class, language, split and package; doc coverage; skip reasons."""
    by_label = Counter(r.label for r in records)
    by_lang_label: dict[str, Counter[str]] = defaultdict(Counter)
    by_split: dict[str, Counter[str]] = defaultdict(Counter)
    by_pkg: dict[str, Counter[str]] = defaultdict(Counter)
    docs: dict[str, Counter[str]] = defaultdict(Counter)
    for r in records:
        by_lang_label[r.language][r.label] += 1
        by_split[r.split][r.label] += 1
        by_pkg[r.package][r.label] += 1
        docs[r.label]["all"] += 1
        docs[r.language]["all"] += 1
        if r.doc:
            docs[r.label]["doc"] += 1
            docs[r.language]["doc"] += 1
    with_doc = sum(1 for r in records if r.doc)
    return {
        "functions": len(records),
        "files_parsed": files_parsed,
        "by_label": dict(sorted(by_label.items())),
        "by_language": {k: dict(sorted(v.items())) for k, v in sorted(by_lang_label.items())},
        "by_split": {k: dict(sorted(v.items())) for k, v in sorted(by_split.items())},
        "packages": len(by_pkg),
        "packages_by_split": dict(Counter({r.package: r.split for r in records}.values())),
        "by_package": {k: dict(sorted(v.items())) for k, v in sorted(by_pkg.items())},
        "doc_coverage": {
            "all": round(with_doc / len(records), 3) if records else 0.0,
            **{k: round(v["doc"] / v["all"], 3) for k, v in sorted(docs.items())},
        },
        "skipped": dict(sorted((skipped or Counter()).items())),
    }


def stats_markdown(stats: dict[str, Any], top_packages: int = 25) -> str:
    """A short human-readable report of ``compute_stats`` output."""
    labels = sorted(stats["by_label"])
    lines = [
        f"Functions: **{stats['functions']}** from {stats['files_parsed']} files, "
        f"{stats['packages']} packages; docs present for {stats['doc_coverage']['all']:.0%}.",
        "",
    ]
    lines.append("| language | " + " | ".join(labels) + " | total |")
    lines.append("|---" * (len(labels) + 2) + "|")
    for lang, c in stats["by_language"].items():
        lines.append(
            f"| {lang} | "
            + " | ".join(str(c.get(lb, 0)) for lb in labels)
            + f" | {sum(c.values())} |"
        )
    lines.append(
        "| **all** | "
        + " | ".join(str(stats["by_label"][lb]) for lb in labels)
        + f" | {stats['functions']} |"
    )
    lines += [
        "",
        "| split | " + " | ".join(labels) + " | packages |",
        "|---" * (len(labels) + 2) + "|",
    ]
    for side, c in stats["by_split"].items():
        lines.append(
            f"| {side} | "
            + " | ".join(str(c.get(lb, 0)) for lb in labels)
            + f" | {stats['packages_by_split'].get(side, 0)} |"
        )
    cov = stats["doc_coverage"]
    lines += [
        "",
        "Doc coverage: " + ", ".join(f"{k} {v:.0%}" for k, v in cov.items() if k != "all"),
        "",
    ]
    biggest = sorted(stats["by_package"].items(), key=lambda kv: -sum(kv[1].values()))[
        :top_packages
    ]
    lines += [
        f"Largest {len(biggest)} packages:",
        "",
        "| package | " + " | ".join(labels) + " |",
        "|---" * (len(labels) + 1) + "|",
    ]
    for pkg, c in biggest:
        lines.append(f"| {pkg} | " + " | ".join(str(c.get(lb, 0)) for lb in labels) + " |")
    if stats["skipped"]:
        lines += ["", "Left out: " + ", ".join(f"{k} {v}" for k, v in stats["skipped"].items())]
    return "\n".join(lines) + "\n"
