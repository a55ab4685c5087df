"""Held-out split by package, stored in a file so evaluation cannot leak.

Functions of one package share helpers, naming and copy-pasted code; splitting by
function would put near-duplicates on both sides and inflate test scores. The split
file (``corpora/split.json``) maps each package to ``train`` or ``test``. Packages already
in the file keep their side forever; new packages are assigned deterministically (hash
order with a fixed seed) until each class reaches its test fraction, and every class is
guaranteed members on both sides.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

SPLIT_VERSION = 1
DEFAULT_SEED = "perfmodel-corpus-split-v1"
DEFAULT_TEST_FRACTION = 0.2


@dataclass
class SplitDefinition:
    """Package -> side, plus the parameters used to assign new packages."""

    packages: dict[str, str] = field(default_factory=dict)
    seed: str = DEFAULT_SEED
    test_fraction: float = DEFAULT_TEST_FRACTION

    def side(self, package: str) -> str:
        return self.packages[package]

    def to_json(self) -> str:
        data = {
            "version": SPLIT_VERSION,
            "unit": "package",
            "seed": self.seed,
            "test_fraction": self.test_fraction,
            "packages": dict(sorted(self.packages.items())),
        }
        return json.dumps(data, indent=1) + "\n"


def load_split(path: Path) -> SplitDefinition:
    data = json.loads(path.read_text())
    if data.get("version") != SPLIT_VERSION or data.get("unit") != "package":
        raise ValueError(f"{path}: not a version-{SPLIT_VERSION} package split file")
    bad = {k: v for k, v in data["packages"].items() if v not in ("train", "test")}
    if bad:
        raise ValueError(f"{path}: sides must be 'train' or 'test', got {bad}")
    return SplitDefinition(dict(data["packages"]), data["seed"], float(data["test_fraction"]))


def _order(seed: str, package: str) -> str:
    return hashlib.sha256(f"{seed}|{package}".encode()).hexdigest()


def assign(split: SplitDefinition, counts: dict[str, Counter[str]]) -> list[str]:
    """Assign every package in ``counts`` not yet in ``split``; returns those packages.

    ``counts`` maps package -> counts per stratum, where a stratum is a label or
    ``label|language``: stratifying by language too keeps e.g. Python network code on
    both sides instead of letting the larger Java share fill the test quota. Mutates
    ``split``.
    """
    new = sorted(
        (p for p in counts if p not in split.packages), key=lambda p: _order(split.seed, p)
    )
    totals: Counter[str] = Counter()
    test: Counter[str] = Counter()
    for pkg, c in counts.items():
        totals.update(c)
        if split.packages.get(pkg) == "test":
            test.update(c)
    unassigned = set(new)
    for label in sorted(totals, key=lambda lb: (totals[lb], lb)):
        target = split.test_fraction * totals[label]
        for pkg in new:
            if pkg not in unassigned or counts[pkg][label] == 0:
                continue
            need = target - test[label]
            if need <= 0:
                break
            # a package much larger than what is still needed would overshoot: skip it
            if counts[pkg][label] > max(2 * need, 0.05 * totals[label]):
                continue
            split.packages[pkg] = "test"
            test.update(counts[pkg])
            unassigned.discard(pkg)
    for pkg in new:
        if pkg in unassigned:
            split.packages[pkg] = "train"
    _ensure_both_sides(split, counts)
    return new


def _ensure_both_sides(split: SplitDefinition, counts: dict[str, Counter[str]]) -> None:
    by_label: dict[str, list[str]] = defaultdict(list)
    per_label: dict[str, Counter[str]] = defaultdict(Counter)
    for pkg, c in counts.items():
        for stratum, n in c.items():
            label = stratum.split("|", 1)[0]
            if n:
                if pkg not in by_label[label]:
                    by_label[label].append(pkg)
                per_label[pkg][label] += n
    for label, pkgs in sorted(by_label.items()):
        sides = {split.packages[p] for p in pkgs}
        if len(pkgs) < 2:
            raise ValueError(
                f"class {label!r} comes from one package only ({pkgs[0]}); "
                "a by-package split needs at least two"
            )
        for missing in ("test", "train"):
            if missing not in sides:
                pkgs.sort(key=lambda p: (per_label[p][label], _order(split.seed, p)))
                split.packages[pkgs[0]] = missing
