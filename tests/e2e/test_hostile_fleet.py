"""Issue 42, class 7, end to end: ``perfmodel fleet`` over a hostile log folder.

The folder holds copies of a real Spark log (the same application three times, one in an
attempt folder, one in a date folder), the log with its ``spark.master`` rewritten to
``local[1000000]``, a dangling link, a link loop, a link back to the folder, a FIFO, a link
to a device, an empty folder named like a log, and a listing that names itself, a file of
``/etc/passwd``'s shape and a missing path. The run must finish, account for every entry,
count the application once, keep the huge claim from dominating the totals, and print no
line of the file that is not a log.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import zstandard

from tests.conftest import EXAMPLE_LOG, REPO

CLI = [sys.executable, "-c", "from perfmodel.cli import main; main()"]


def _hostile_folder(root: Path) -> tuple[Path, Path]:
    logs = root / "logs"
    (logs / "attempt-1").mkdir(parents=True)
    (logs / "2026-11-01").mkdir()
    shutil.copy(EXAMPLE_LOG, logs / "app-1.zstd")
    shutil.copy(EXAMPLE_LOG, logs / "attempt-1" / "app-1.zstd")
    shutil.copy(EXAMPLE_LOG, logs / "2026-11-01" / "app-1.zstd")
    with open(EXAMPLE_LOG, "rb") as f:
        text = zstandard.ZstdDecompressor().stream_reader(f).read()
    huge = text.replace(b'"local[2]"', b'"local[1000000]"').replace(
        b"local-1795356373666", b"local-1795356373667"
    )
    (logs / "app-huge.json").write_bytes(huge)
    (logs / "dangling.zstd").symlink_to(logs / "nowhere")
    (logs / "loopA").symlink_to(logs / "loopB")
    (logs / "loopB").symlink_to(logs / "loopA")
    (logs / "back").symlink_to(logs)
    os.mkfifo(logs / "fifo.zstd")
    (logs / "device.zstd").symlink_to("/dev/zero")
    (logs / "application_1_0001").mkdir()
    secret = root / "passwd"
    secret.write_text("root:x:0:0:SECRET-LINE:/root:/bin/bash\n")
    listing = root / "list.txt"
    listing.write_text(f"{listing}\n{secret}\n{root / 'missing.zstd'}\n{logs / 'app-1.zstd'}\n")
    return logs, listing


def test_fleet_accounts_for_every_entry_of_a_hostile_folder(tmp_path: Path) -> None:
    logs, listing = _hostile_folder(tmp_path)
    out = tmp_path / "out"
    run = subprocess.run(
        [*CLI, "fleet", str(logs), str(listing), "--out", str(out), "--jobs", "2", "--json"],
        env={**os.environ, "PYTHONPATH": str(REPO), "PERFMODEL_STATE_DIR": str(tmp_path / "s")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    summary = json.loads(run.stdout)
    errors = {
        Path(r["log_path"]).name: r for r in pq.read_table(out / "errors.parquet").to_pylist()
    }
    apps = pq.read_table(out / "apps.parquet").to_pylist()
    assert sorted(
        Path(a["log_path"]).parent.name for a in apps if a["log_path"].endswith("app-1.zstd")
    ) == ["2026-11-01", "attempt-1", "logs"]
    kinds = {name: r["kind"] for name, r in errors.items()}
    assert kinds == {
        "dangling.zstd": "dangling_link",
        "loopA": "link_loop",
        "loopB": "link_loop",
        "fifo.zstd": "not_a_regular_file",
        "device.zstd": "not_a_regular_file",
        "application_1_0001": "not_a_log",
        "list.txt": "listing_loop",
        "missing.zstd": "missing",
        "passwd": "NotAnEventLogError",
    }
    assert "SECRET-LINE" not in run.stdout + run.stderr
    assert "SECRET-LINE" not in errors["passwd"]["reason"]
    # The application in three files counts once; the huge claim is bounded.
    assert summary["applications"] == 2
    assert summary["duplicate_logs"] == 2
    first = str((logs / "2026-11-01" / "app-1.zstd").resolve())  # the first by path
    assert sorted(a["duplicate_of"] or "" for a in apps) == ["", "", first, first]
    huge = next(a for a in apps if a["log_path"].endswith("app-huge.json"))
    assert "counted as 1024" in huge["held_from"]
    assert huge["held_core_hours"] <= 1024 * huge["duration_s"] / 3600 + 1e-9
    one = next(a for a in apps if a["log_path"] == str((logs / "app-1.zstd").resolve()))
    assert summary["held_core_hours"] == pytest.approx(
        one["held_core_hours"] + huge["held_core_hours"], rel=1e-9
    )
