"""`diagnose --json` on every real log must not drift: compared with committed golden files.

The golden files were written by the code before the scale rewrite (columnar tasks, linear
critical path); any change to them is an intended fix and is named in the commit that makes
it. Floats compare to 1e-9 relative: vectorised sums add in a different order.
Regenerate (after checking every difference is intended) with
``PYTHONPATH=$PWD .venv/bin/python tests/e2e/test_golden_diagnosis.py``.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "data" / "golden"
SHARED_EVENTLOGS = REPO.parent / "shared" / "data" / "eventlogs"
LOCAL_LOGS = [REPO / "examples" / "eventlogs" / "etl-local2.zstd"] + sorted(
    p for p in (REPO / "tests" / "data" / "eventlogs").iterdir() if p.name != "SOURCES.md"
)
VOLATILE = ("source",)
"""Top-level fields that depend on where the log lies, not what it holds (the log's own
path, wherever else it appears, reads ``<log>``)."""


def _shared_logs() -> list[Path]:
    if not SHARED_EVENTLOGS.is_dir():
        return []
    return sorted(p for p in SHARED_EVENTLOGS.iterdir() if p.name != "SOURCES.md")


def diagnosis_json(log: Path) -> dict[str, Any]:
    """What `perfmodel diagnose --json LOG` prints, less the volatile fields."""
    import perfmodel

    return comparable(json.dumps(perfmodel.load(log).diagnose().to_json(), default=str), log)


def comparable(text: str, log: Path) -> dict[str, Any]:
    """The JSON ``text`` of a diagnosis of ``log`` as the golden files hold it: its path read
    as ``<log>``, without the volatile fields."""
    result: dict[str, Any] = json.loads(text.replace(json.dumps(str(log))[1:-1], "<log>"))
    for key in VOLATILE:
        result.pop(key, None)
    return result


def differences(want: Any, got: Any, where: str = "$") -> list[str]:
    """Where a diagnosis differs from its golden file (floats to 1e-9 relative)."""
    if isinstance(want, float) or isinstance(got, float):
        if isinstance(want, (int, float)) and isinstance(got, (int, float)):
            if math.isclose(want, got, rel_tol=1e-9, abs_tol=1e-9):
                return []
        return [f"{where}: {want!r} != {got!r}"]
    if isinstance(want, dict) and isinstance(got, dict):
        out = [f"{where}: key {k!r} missing" for k in want if k not in got]
        out += [f"{where}: key {k!r} added" for k in got if k not in want]
        for key in want.keys() & got.keys():
            out += differences(want[key], got[key], f"{where}.{key}")
        return out
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{where}: {len(want)} items != {len(got)}"]
        out: list[str] = []
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            out += differences(w, g, f"{where}[{i}]")
        return out
    return [] if want == got else [f"{where}: {want!r} != {got!r}"]


@pytest.mark.parametrize("log", _shared_logs() + LOCAL_LOGS, ids=lambda p: p.name)
def test_diagnosis_matches_golden(log: Path) -> None:
    golden = GOLDEN / f"{log.name}.json"
    if not golden.exists():
        pytest.skip(f"no golden file for {log.name}")
    want = json.loads(golden.read_text())
    got = diagnosis_json(log)
    diffs = differences(want, got)
    assert not diffs, "\n".join(diffs[:40])


def test_every_shared_log_has_a_golden_file() -> None:
    logs = _shared_logs()
    if not logs:
        pytest.skip(f"shared event logs not found at {SHARED_EVENTLOGS}")
    missing = [p.name for p in logs + LOCAL_LOGS if not (GOLDEN / f"{p.name}.json").exists()]
    assert not missing


if __name__ == "__main__":
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for path in _shared_logs() + LOCAL_LOGS:
        (GOLDEN / f"{path.name}.json").write_text(
            json.dumps(diagnosis_json(path), indent=1, sort_keys=True) + "\n"
        )
        print("wrote", path.name, file=sys.stderr)
