"""The process-tree monitor on real processes: CPU, memory and children that come and go."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from perfmodel.profile import bundle
from perfmodel.profile.record import bundle_write
from perfmodel.profile.record.monitor import ProcessTreeMonitor, ResourceSummary

BURN = (  # each process spins until it has used 1.2 s of CPU, however busy the machine
    "import subprocess, sys, time\n"
    "child = subprocess.Popen([sys.executable, '-c', "
    "'import time\\nwhile time.process_time() < 1.2: pass'])\n"
    "while time.process_time() < 1.2: pass\n"
    "child.wait()\n"
)


def test_monitor_sees_the_tree_busy_and_counts_cpu_seconds() -> None:
    proc = subprocess.Popen([sys.executable, "-c", BURN])
    monitor = ProcessTreeMonitor(proc.pid, interval_s=0.1)
    monitor.start()
    proc.wait(timeout=120)
    time.sleep(0.2)
    summary = monitor.stop()
    assert summary.interval_s == 0.1
    # Two processes spinning for 1.2 s of CPU each: about 2.4 CPU seconds (less where the
    # monitor's last poll misses the end, never much more than they asked for).
    assert 1.0 < summary.cpu_s < 3.5
    assert max(s.processes for s in summary.samples) == 2
    # Busy cores are CPU seconds per second between polls: over the polls they add up to the
    # CPU seconds counted (all but the first poll's, which the monitor's start precedes). A
    # threshold on the cores seen would measure the machine's load, not the monitor.
    samples = summary.samples
    busy_s = sum(
        b.cpu_cores * (b.t_ms - a.t_ms) / 1000 for a, b in zip(samples, samples[1:], strict=False)
    )
    assert summary.cpu_s - 0.5 < busy_s <= summary.cpu_s + 1e-6, (busy_s, summary.cpu_s)
    assert max(s.cpu_cores for s in samples) > 0.1
    assert summary.peak_rss_bytes > 5e6
    times = [s.t_ms for s in summary.samples]
    assert times == sorted(times) and abs(times[-1] / 1000 - time.time()) < 5
    # After the tree exited nothing is busy, and the totals keep what was seen.
    assert summary.samples[-1].cpu_cores == 0 and summary.samples[-1].processes == 0


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
