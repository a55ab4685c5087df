"""The process-tree monitor on real processes: its samples through the bundle. The monitor
watching a busy tree of processes is in tests/e2e/test_monitor_busy_tree.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from perfmodel.profile import bundle
from perfmodel.profile.record import bundle_write
from perfmodel.profile.record.monitor import ProcessTreeMonitor, ResourceSummary


def test_resources_round_trip_through_the_bundle(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    monitor = ProcessTreeMonitor(proc.pid, interval_s=0.1)
    monitor.start()
    proc.wait(timeout=30)
    summary = monitor.stop()
    entry = bundle_write.write_resources(tmp_path, summary)
    assert entry["file"] == bundle.RESOURCES and entry["samples"] == len(summary.samples)
    loaded = bundle.load_resources(tmp_path)
    assert loaded == sorted(summary.samples, key=lambda s: s.t_ms)
    assert bundle.load_resources(tmp_path / "nothing-here") == []


def test_an_empty_summary_writes_an_empty_table(tmp_path: Path) -> None:
    bundle_write.write_resources(tmp_path, ResourceSummary(interval_s=0.25))
    assert bundle.load_resources(tmp_path) == []


def test_an_unreadable_resources_file_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / bundle.RESOURCES).write_bytes(b"not parquet")
    try:
        bundle.load_resources(tmp_path)
    except bundle.BundleError as exc:
        assert "resources.parquet" in str(exc)
    else:
        raise AssertionError("no error")
