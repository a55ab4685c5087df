"""Build the labeled corpus: select files, extract and label functions, dedup, split, write.

One call does everything so the corpus is reproducible by one command from the manifests
and the source installed on the machine (JDK ``src.zip``, Python stdlib, site-packages).
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfmodel.atomic import write_atomically
from perfmodel.embed.corpus.dataset import CorpusRecord, write_corpus
from perfmodel.embed.corpus.dedup import body_key, dedup
from perfmodel.embed.corpus.extract_file import Chunk, ChunkResult, process_chunk
from perfmodel.embed.corpus.manifest import (
    Labeler,
    LabelSet,
    Manifest,
    ManifestError,
    load_manifests,
)
from perfmodel.embed.corpus.split import SplitDefinition, assign, load_split
from perfmodel.embed.corpus.stats import compute_stats, stats_markdown
from perfmodel.embed.source.languages import language_of
from perfmodel.embed.source.roots import (
    OpenRoot,
    SourceRoot,
    find_jdk_src_zip,
    module_of,
    python_stdlib_dir,
    site_packages_dirs,
)

CHUNK_FILES = 40
Progress = Callable[[int, int], None]


class BuildError(RuntimeError):
    """The build cannot run as asked (missing root, empty result); message says how to fix it."""


@dataclass
class BuildConfig:
    manifests: list[Path]
    out: Path
    split_file: Path | None
    roots: dict[str, list[Path]] = field(default_factory=dict)  # overrides of named roots
    jobs: int = 2
    write_split: bool = True


@dataclass
class BuildResult:
    out: Path
    records: list[CorpusRecord]
    stats: dict[str, Any]
    new_packages: list[str]
    seconds: float


def default_named_roots() -> dict[str, list[Path]]:
    """Root names manifests may use without ``--root``: jdk, python-stdlib, site-packages."""
    named: dict[str, list[Path]] = {
        "python-stdlib": [python_stdlib_dir()],
        "site-packages": site_packages_dirs(),
    }
    jdk = find_jdk_src_zip()
    if jdk is not None:
        named["jdk"] = [jdk]
    return named


def _resolve_roots(
    manifests: list[Manifest], overrides: dict[str, list[Path]]
) -> dict[str, list[SourceRoot]]:
    named = {**default_named_roots(), **overrides}
    out: dict[str, list[SourceRoot]] = {}
    for m in manifests:
        for name in m.roots:
            if name not in named or not named[name]:
                hint = (
                    " Install the JDK sources (Debian: apt-get install openjdk-17-source, or run "
                    "scripts/corpus_build.sh) or pass --root jdk=/path/to/src.zip."
                    if name == "jdk"
                    else f" Pass --root {name}=PATH."
                )
                raise BuildError(
                    f"{m.path.name}: source root {name!r} not found on this machine.{hint}"
                )
            out[name] = [SourceRoot(name, p) for p in named[name]]
    return out


def _file_prefix(logical: str, language: str) -> tuple[str, ...]:
    """Leading name segments every function in the file will have."""
    if language == "python":
        module, _ = module_of(logical)
        return tuple(module.split("."))
    stem = logical.rsplit(".", 1)[0]
    return tuple(stem.split("/"))


def plan_chunks(
    manifests: list[Manifest], labels: LabelSet, roots: dict[str, list[SourceRoot]]
) -> list[Chunk]:
    """Files worth parsing: right language, and some rule could match names in them."""
    chunks: list[Chunk] = []
    for m in manifests:
        labeler = Labeler(m, labels)
        for name in m.roots:
            for root in roots[name]:
                with OpenRoot(root) as opened:
                    entries = opened.entries()
                files = [
                    (lp, e)
                    for lp, e in sorted(entries.items())
                    if language_of(lp) == m.language
                    and not _is_test_file(lp)
                    and labeler.may_match_under(_file_prefix(lp, m.language))
                ]
                for i in range(0, len(files), CHUNK_FILES):
                    chunks.append(Chunk(root, m, labels, tuple(files[i : i + CHUNK_FILES])))
    return chunks


def _is_test_file(logical: str) -> bool:
    """Test suites exercise code rather than being it; their labels would be wrong."""
    parts = logical.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    in_test_dir = any(p in ("test", "tests", "testing", "idle_test") for p in parts[:-1])
    return in_test_dir or stem.startswith("test_") or stem.endswith("_test") or stem == "conftest"


def _run_chunks(chunks: list[Chunk], jobs: int, progress: Progress | None) -> list[ChunkResult]:
    total = sum(len(c.files) for c in chunks)
    done = 0
    results: list[ChunkResult] = []
    if jobs <= 1:
        for c in chunks:
            results.append(process_chunk(c))
            done += len(c.files)
            if progress:
                progress(done, total)
        return results
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for c, r in zip(chunks, pool.map(process_chunk, chunks), strict=True):
            results.append(r)
            done += len(c.files)
            if progress:
                progress(done, total)
    return results


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def build_corpus(config: BuildConfig, progress: Progress | None = None) -> BuildResult:
    """Run the whole build and write ``config.out``."""
    start = time.monotonic()
    labels, manifests = load_manifests(config.manifests)
    roots = _resolve_roots(manifests, config.roots)
    chunks = plan_chunks(manifests, labels, roots)
    results = _run_chunks(chunks, config.jobs, progress)
    skipped: Counter[str] = Counter()
    rows: list[dict[str, Any]] = []
    for r in results:
        skipped.update(r.skipped)
        rows.extend(r.rows)
    files_parsed = sum(r.files for r in results)
    if not rows:
        raise BuildError("no function matched the manifests; check the roots and patterns")
    outcome = dedup(
        [body_key(str(r["signature"]), str(r["body"]), str(r["name"])) for r in rows],
        [str(r["label"]) for r in rows],
        [(str(r["qualified_name"]), str(r["path"])) for r in rows],
    )
    skipped["duplicate"] += outcome.duplicates
    skipped["duplicate-conflicting-labels"] += outcome.conflicting
    rows = [rows[i] for i in outcome.kept]

    split = (
        load_split(config.split_file)
        if config.split_file and config.split_file.is_file()
        else SplitDefinition()
    )
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for row in rows:
        counts[str(row["package"])][f"{row['label']}|{row['language']}"] += 1
    try:
        new_packages = assign(split, counts)
    except ValueError as e:
        raise BuildError(str(e)) from e
    records = sorted(
        (CorpusRecord(**row, split=split.side(str(row["package"]))) for row in rows),
        key=lambda r: (r.language, r.qualified_name, r.id),
    )
    stats = compute_stats(records, skipped, files_parsed)
    seconds = time.monotonic() - start
    info = {
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": round(seconds, 1),
        "python": platform.python_version(),
        "roots": {n: [str(r.path) for r in rs] for n, rs in sorted(roots.items())},
        "jdk_release": _jdk_release(roots.get("jdk", [])),
        "manifests": {m.path.name: _sha(m.path) for m in manifests}
        | {labels.path.name: _sha(labels.path)},
        "labels": labels.labels,
        "split_file": str(config.split_file) if config.split_file else None,
        "functions": len(records),
        "argv": sys.argv[1:],
    }
    write_corpus(records, config.out, info)

    write_atomically(config.out / "stats.json", json.dumps(stats, indent=1) + "\n")
    write_atomically(config.out / "stats.md", stats_markdown(stats))
    write_atomically(config.out / "split.json", split.to_json())
    if (
        config.split_file
        and config.write_split
        and (new_packages or not config.split_file.is_file())
    ):
        write_atomically(config.split_file, split.to_json())
    return BuildResult(config.out, records, stats, new_packages, seconds)


def _jdk_release(roots: list[SourceRoot]) -> str | None:
    """JDK version the sources are from, read from VersionProps.java inside src.zip."""
    for r in roots:
        with OpenRoot(r) as opened:
            entry = opened.entries().get("java/lang/VersionProps.java")
            if entry is None:
                continue
            text = opened.read(entry).decode("utf-8", "replace")
        m = re.search(r'VERSION_NUMBER\s*=\s*"([^"]+)"', text)
        if m:
            return m.group(1)
    return None


__all__ = ["BuildConfig", "BuildError", "BuildResult", "ManifestError", "build_corpus"]
