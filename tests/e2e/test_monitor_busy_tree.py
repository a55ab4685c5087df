"""The process-tree monitor on a real busy tree: a process and its child each spin until
they have used 1.2 s of CPU, and the monitor counts the tree's CPU seconds, its processes
and its memory. A few seconds of real work per run, so it runs with the end-to-end tests;
the monitor's samples through the bundle are checked in tests/unit/test_profile_monitor.py."""

from __future__ import annotations

import subprocess
import sys
import time

from perfmodel.profile.record.monitor import ProcessTreeMonitor

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
