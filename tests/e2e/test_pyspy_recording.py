"""py-spy: sampling a real Python process, reading chrometrace, and rejecting other formats.

tests/data/record/pyspy-busy.json was produced by
``py-spy record --pid <pid> --nonblocking --rate 50 --format chrometrace -o pyspy-busy.json``
on a script (/tmp/busy1.py) that
sleeps 0.5 s, hashes for 1 s (``work``), sleeps 0.5 s and hashes for 0.5 s.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from perfmodel.profile import pyspy
from perfmodel.profile.record import pyspy_recorder
from perfmodel.profile.record.proctree import ProcessTree

DATA = Path(__file__).parents[1] / "data" / "record"

BURN_CPU = """
import hashlib, time

def burn_cpu(seconds):
    h = hashlib.sha256()
    end = time.time() + seconds
    while time.time() < end:
        h.update(b"x" * 4096)
"""

BUSY = (
    BURN_CPU
    + """
time.sleep(0.3)
burn_cpu(1.5)
"""
)


def test_recorder_samples_a_real_process(tmp_path: Path) -> None:
    exe = pyspy.py_spy_executable()
    assert exe is not None
    script = tmp_path / "busy.py"
    script.write_text(BUSY)
    before = time.time() * 1000
    child = subprocess.Popen([sys.executable, str(script)])
    recorder = pyspy_recorder.PySpyRecorder(tmp_path, 20, exe)
    recorder.poll(ProcessTree(child.pid).processes())
    child.wait(timeout=60)
    written = recorder.stop()
    after = time.time() * 1000
    if not written:
        pytest.fail(f"py-spy wrote nothing: {recorder.warnings}")
    # Reaped with wait4: what sampling cost is known (1.5 s at 50 Hz takes some CPU).
    assert 0 < recorder.cpu_s < 1.5
    assert all(s.proc.returncode is not None for s in recorder.samplers)
    rec = pyspy.read_pyspy(written[0])
    assert rec.error is None and rec.meta is not None and rec.meta.role == "python driver"
    samples = rec.samples
    frames = {f for stack in samples.column("frames").to_pylist() for f in stack}
    assert f"burn_cpu ({script})" in frames
    ts = samples.column("timestamp_ms").to_numpy()
    assert ts.min() >= before - 50 and ts.max() <= after + 50
    # About 1.5 s of burn_cpu at 50 Hz; rebuilt sample counts follow the durations.
    burning = sum(
        1 for stack in samples.column("frames").to_pylist() if f"burn_cpu ({script})" in stack
    )
    assert 30 <= burning <= 90


def test_committed_chrometrace_reads_with_estimated_start() -> None:
    rec = pyspy.read_pyspy(DATA / "pyspy-busy.json")
    assert rec.error is None
    assert rec.meta is not None and rec.meta.start_estimated
    assert any("estimated" in w for w in rec.warnings)
    stacks = rec.samples.column("frames").to_pylist()
    assert any(s[-1] == "work (/tmp/busy1.py)" for s in stacks)


def test_wrong_formats_give_one_clear_message(tmp_path: Path) -> None:
    speedscope = tmp_path / "profile.json"
    speedscope.write_text(json.dumps({"$schema": "https://www.speedscope.app/", "profiles": []}))
    rec = pyspy.read_pyspy(speedscope)
    assert rec.error is not None and "--format chrometrace" in rec.error
    raw = tmp_path / "raw.txt"
    raw.write_text("main (app.py:3);work (app.py:9) 12\n")
    rec = pyspy.read_pyspy(raw)
    assert rec.error is not None and "chrometrace" in rec.error


BURN_SLEEP_BURN = (
    BURN_CPU
    + """
def burn_first(seconds):
    burn_cpu(seconds)

def burn_again(seconds):
    burn_cpu(seconds)

burn_first(0.8)
time.sleep(2.5)
burn_again(0.8)
"""
)


def test_idle_process_sampler_stops_and_restarts(tmp_path: Path) -> None:
    """A process blocked for longer than ``idle_stop_s`` loses its sampler, and a new one
    records it once it runs again: two recordings, the busy spells in each."""
    exe = pyspy.py_spy_executable()
    assert exe is not None
    script = tmp_path / "burst.py"
    script.write_text(BURN_SLEEP_BURN)
    child = subprocess.Popen([sys.executable, str(script)])
    recorder = pyspy_recorder.PySpyRecorder(tmp_path, 20, exe, idle_stop_s=0.5)
    tree = ProcessTree(child.pid)
    while child.poll() is None:
        recorder.poll(tree.processes())
        time.sleep(0.1)
    written = recorder.stop()
    assert len(written) == 2, (written, recorder.warnings)
    assert written[0].name == f"pyspy-{child.pid}.json"
    assert written[1].name == f"pyspy-{child.pid}-1.json"
    first, second = (pyspy.read_pyspy(p) for p in written)
    assert first.error is None and second.error is None
    first_frames = {f for s in first.samples.column("frames").to_pylist() for f in s}
    second_frames = {f for s in second.samples.column("frames").to_pylist() for f in s}
    assert f"burn_first ({script})" in first_frames
    assert f"burn_again ({script})" not in first_frames
    assert f"burn_again ({script})" in second_frames
    # The sleep is not sampled in full: the first recording stops within a second of it.
    first_end = first.samples.column("timestamp_ms").to_numpy().max()
    second_start = second.samples.column("timestamp_ms").to_numpy().min()
    assert second_start - first_end > 1000
