"""Labeling manifests: which code is CPU-, disk- or network-bound, and why.

``labels.toml`` declares the resource classes (the class set is data, so a new resource
needs no code change) and exclusions that apply everywhere. Every other ``*.toml`` in the
manifest directory selects sources (language, named roots) and maps name patterns to a
label with a one-line reason, plus exclusions for code that mixes resources. Any
malformed entry is rejected with an error naming the file and the entry.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from perfmodel.embed.corpus.patterns import Pattern, PatternError, normalize_name

LABELS_FILE = "labels.toml"
LANGUAGES = ("java", "scala", "python")


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Rule:
    """Pattern -> label, with the reason an expert gave."""

    pattern: Pattern
    label: str
    reason: str
    manifest: str


@dataclass(frozen=True)
class Exclusion:
    """Pattern of code left out of the corpus, and why."""

    pattern: Pattern
    reason: str
    manifest: str


@dataclass(frozen=True)
class LabelSet:
    """The resource classes and the exclusions shared by all manifests."""

    labels: dict[str, str]
    excludes: tuple[Exclusion, ...]
    path: Path


@dataclass(frozen=True)
class Manifest:
    """One source selection with its labeling rules."""

    path: Path
    name: str
    language: str
    roots: tuple[str, ...]
    rules: tuple[Rule, ...]
    excludes: tuple[Exclusion, ...]


@dataclass(frozen=True)
class Decision:
    """The outcome of labeling one function: a label, or why it has none."""

    label: str | None
    rule: Rule | None = None
    excluded_by: str | None = None  # "exclude:<pattern>", "conflict", "unmatched"


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(f"{path}: not valid TOML: {e}") from e
    except OSError as e:
        raise ManifestError(f"{path}: cannot read: {e}") from e


def _check_keys(
    path: Path, where: str, entry: dict[str, Any], allowed: set[str], required: set[str]
) -> None:
    if not isinstance(entry, dict):
        raise ManifestError(f"{path}: {where}: must be a table, got {entry!r}")
    unknown = set(entry) - allowed
    if unknown:
        raise ManifestError(f"{path}: {where}: unknown key(s) {sorted(unknown)}")
    missing = required - set(entry)
    if missing:
        raise ManifestError(f"{path}: {where}: missing key(s) {sorted(missing)}")


def _entry_name(kind: str, index: int, entry: object) -> str:
    """``rule #3 (java.io.**)``: how errors point at an entry."""
    if isinstance(entry, dict):
        return f"{kind} #{index} ({entry.get('pattern', 'no pattern')})"
    return f"{kind} #{index}"


def _reason(path: Path, where: str, entry: dict[str, Any]) -> str:
    reason = entry.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise ManifestError(f"{path}: {where}: 'reason' must be a non-empty one-line string")
    if "\n" in reason.strip():
        raise ManifestError(f"{path}: {where}: 'reason' must be one line")
    return reason.strip()


def _pattern(path: Path, where: str, text: object) -> Pattern:
    try:
        return Pattern.parse(text)
    except PatternError as e:
        raise ManifestError(f"{path}: {where}: {e}") from e


def _excludes(path: Path, raw: object) -> tuple[Exclusion, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ManifestError(f"{path}: 'exclude' must be an array of tables ([[exclude]])")
    out: list[Exclusion] = []
    for i, entry in enumerate(raw, 1):
        where = _entry_name("exclude", i, entry)
        _check_keys(path, where, entry, {"pattern", "reason"}, {"pattern", "reason"})
        out.append(
            Exclusion(
                _pattern(path, where, entry["pattern"]), _reason(path, where, entry), path.name
            )
        )
    return tuple(out)


def load_labels(path: Path) -> LabelSet:
    """Read ``labels.toml``: ``[labels.<name>] description = ...`` and global ``[[exclude]]``."""
    data = _read_toml(path)
    _check_keys(path, "top level", data, {"labels", "exclude"}, {"labels"})
    labels = data["labels"]
    if not isinstance(labels, dict) or len(labels) < 2:
        raise ManifestError(f"{path}: 'labels' must declare at least two classes")
    out: dict[str, str] = {}
    for name, entry in labels.items():
        where = f"label {name!r}"
        if not name.isidentifier() or name != name.lower():
            raise ManifestError(f"{path}: {where}: label names must be lower-case identifiers")
        _check_keys(path, where, entry, {"description"}, {"description"})
        out[name] = str(entry["description"]).strip()
    return LabelSet(labels=out, excludes=_excludes(path, data.get("exclude")), path=path)


def load_manifest(path: Path, labels: LabelSet) -> Manifest:
    """Read one source manifest and validate every rule against the label set."""
    data = _read_toml(path)
    _check_keys(path, "top level", data, {"source", "rule", "exclude"}, {"source", "rule"})
    src = data["source"]
    _check_keys(path, "[source]", src, {"language", "roots"}, {"language", "roots"})
    if src["language"] not in LANGUAGES:
        raise ManifestError(
            f"{path}: [source]: language must be one of {LANGUAGES}, got {src['language']!r}"
        )
    roots = src["roots"]
    if not isinstance(roots, list) or not roots or not all(isinstance(r, str) and r for r in roots):
        raise ManifestError(f"{path}: [source]: 'roots' must be a non-empty list of root names")
    if not isinstance(data["rule"], list) or not data["rule"]:
        raise ManifestError(f"{path}: 'rule' must be a non-empty array of tables ([[rule]])")
    rules: list[Rule] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(data["rule"], 1):
        where = _entry_name("rule", i, entry)
        _check_keys(
            path, where, entry, {"pattern", "label", "reason"}, {"pattern", "label", "reason"}
        )
        pattern = _pattern(path, where, entry["pattern"])
        if entry["label"] not in labels.labels:
            raise ManifestError(
                f"{path}: {where}: unknown label {entry['label']!r}; "
                f"declared in {labels.path.name}: {sorted(labels.labels)}"
            )
        if pattern.text in seen:
            raise ManifestError(f"{path}: {where}: duplicate of rule #{seen[pattern.text]}")
        seen[pattern.text] = i
        rules.append(Rule(pattern, entry["label"], _reason(path, where, entry), path.name))
    return Manifest(
        path=path,
        name=path.stem,
        language=src["language"],
        roots=tuple(roots),
        rules=tuple(rules),
        excludes=_excludes(path, data.get("exclude")),
    )


def load_manifests(paths: list[Path]) -> tuple[LabelSet, list[Manifest]]:
    """Load a manifest directory (or explicit files plus the ``labels.toml`` beside them)."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(p.glob("*.toml")))
        elif p.is_file():
            files.append(p)
        else:
            raise ManifestError(f"{p}: no such manifest file or directory")
    label_files = [f for f in files if f.name == LABELS_FILE]
    if not label_files:
        candidates = {f.parent / LABELS_FILE for f in files}
        label_files = [c for c in candidates if c.is_file()]
    if len(label_files) != 1:
        raise ManifestError(
            f"need exactly one {LABELS_FILE} among/next to the manifests, found {len(label_files)}"
        )
    labels = load_labels(label_files[0])
    manifests = [load_manifest(f, labels) for f in files if f.name != LABELS_FILE]
    if not manifests:
        raise ManifestError("no source manifests given")
    return labels, manifests


class Labeler:
    """Applies one manifest's rules (plus global exclusions) to qualified names.

    The most specific matching rule wins; exclusions always win; two equally specific
    rules with different labels mean the code mixes resources, so it is excluded.
    """

    def __init__(self, manifest: Manifest, labels: LabelSet) -> None:
        self.manifest = manifest
        self._excludes = (*labels.excludes, *manifest.excludes)
        self._by_first: dict[str | None, list[Rule]] = {}
        for r in manifest.rules:
            self._by_first.setdefault(r.pattern.first_literal, []).append(r)

    def may_match_under(self, prefix: tuple[str, ...]) -> bool:
        return any(r.pattern.may_match_under(prefix) for r in self.manifest.rules)

    def decide(self, qualified_name: str) -> Decision:
        name = normalize_name(qualified_name)
        first = name.split(".", 1)[0]
        rules = [
            r
            for r in (*self._by_first.get(first, ()), *self._by_first.get(None, ()))
            if r.pattern.matches(name)
        ]
        if not rules:
            return Decision(None, excluded_by="unmatched")
        for ex in self._excludes:
            if ex.pattern.matches(name):
                return Decision(None, excluded_by=f"exclude:{ex.pattern.text}")
        best = max(r.pattern.specificity for r in rules)
        top = [r for r in rules if r.pattern.specificity == best]
        if len({r.label for r in top}) > 1:
            return Decision(None, excluded_by="conflict")
        return Decision(top[0].label, rule=top[0])
