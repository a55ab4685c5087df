"""The held-out split: which workloads may shape the model, which only measure it.

A figure measured on a workload the laws were fitted or tuned on says how well the model
remembers, not how well it predicts. ``experiments/splits/default.toml`` names the two sets; the
accuracy report labels every workload with its side and reports the held-out error on its
own, and the validation study chooses the specs it runs from it (``--held-out``).

    [fit]
    workloads = ["wordcount", ...]
    [held_out]
    workloads = ["tpch", ...]

Workloads are named by their spec's ``workload`` label. A workload in neither list is
``unlisted``: reported, but counted on neither side.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from perfmodel.errors import PerfmodelError
from perfmodel.experiment.spec import load_spec, read_toml_text
from perfmodel.experiment.spec_grid import SpecError

Role = Literal["fit", "held-out", "unlisted"]
FIT: Final = "fit"
HELD_OUT: Final = "held-out"
UNLISTED: Final = "unlisted"
DEFAULT_SPLIT = Path(__file__).resolve().parents[2] / "experiments" / "splits" / "default.toml"
"""The repository's split (present in a source checkout, not in an installed wheel)."""


class SplitError(PerfmodelError):
    """A split file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True, slots=True)
class Split:
    fit: frozenset[str]
    held_out: frozenset[str]
    rule: str
    path: str

    def role(self, workload: str) -> Role:
        if workload in self.held_out:
            return HELD_OUT
        if workload in self.fit:
            return FIT
        return UNLISTED


def _names(data: dict[str, object], section: str, path: Path) -> frozenset[str]:
    table = data.get(section, {})
    if not isinstance(table, dict):
        raise SplitError(f"{path}: [{section}] must be a table with a `workloads` list")
    unknown = set(table) - {"workloads"}
    if unknown:
        raise SplitError(f"{path}: unknown key(s) in [{section}]: {', '.join(sorted(unknown))}")
    names = table.get("workloads", [])
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise SplitError(f"{path}: [{section}] workloads must be a list of workload names")
    if len(set(names)) != len(names):
        raise SplitError(f"{path}: a workload is listed twice in [{section}]")
    return frozenset(names)


def load_split(path: str | Path = DEFAULT_SPLIT) -> Split:
    """Read and check a split file: no workload on both sides, at least one held out."""
    path = Path(path)
    try:
        # A FIFO, a device or a folder is refused before a byte is read, as for spec files.
        data = tomllib.loads(read_toml_text(path, "split"))
    except SpecError as exc:
        raise SplitError(f"cannot read the split file: {exc}") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SplitError(f"{path} is not valid TOML: {exc}") from exc
    unknown = set(data) - {"rule", "fit", "held_out"}
    if unknown:
        raise SplitError(
            f"{path}: unknown key(s) {', '.join(sorted(unknown))} (expected rule, [fit], "
            "[held_out])"
        )
    rule = data.get("rule", "")
    if not isinstance(rule, str):
        raise SplitError(f"{path}: `rule` must be a string")
    fit, held_out = _names(data, "fit", path), _names(data, "held_out", path)
    both = fit & held_out
    if both:
        raise SplitError(f"{path}: {', '.join(sorted(both))} cannot be both fitted on and held out")
    if not held_out:
        raise SplitError(f"{path}: [held_out] names no workload, so nothing could be reported")
    return Split(fit=fit, held_out=held_out, rule=rule, path=str(path))


def specs_for(split: Split, role: Role, specs: list[Path]) -> list[Path]:
    """The spec files among ``specs`` whose workload is on side ``role`` of the split."""
    return [p for p in specs if split.role(load_spec(p).workload) == role]


def main(argv: list[str] | None = None) -> int:
    """``python -m perfmodel.experiment.split SPLIT --role held-out SPEC...``: print the specs
    on that side, one per line (for scripts/validation_study.sh)."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("split", type=Path)
    parser.add_argument("--role", choices=[FIT, HELD_OUT, UNLISTED], default=HELD_OUT)
    parser.add_argument("specs", type=Path, nargs="+")
    args = parser.parse_args(argv)
    try:
        chosen = specs_for(load_split(args.split), args.role, args.specs)
    except PerfmodelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(str(p) for p in chosen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
