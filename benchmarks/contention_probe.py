"""What a sampler-sized CPU load does to the recorded job, with and without many wake-ups.

`perfmodel record`'s samplers take about 2% of this 2-core machine's CPU at the default rates
(`recording_cost` in each bundle), yet the job's runtime grows by about twice that
(docs/recording-overhead.md). This probe runs the same job (tests/data/record/job.py,
plain, with its event log) next to a stand-in load that takes a chosen CPU time per second
in two ways: many short bursts (like samplers waking a few hundred times a second) and few
long ones. If many short bursts cost the job clearly more than few long ones of the same CPU,
the wake-ups themselves are a cost; if both cost the same, any load of that size does.

Rounds rotate plain, ``many`` and ``few`` (order reversed every other round); each prints the
application runtime (event log) median against the plain median, and the CPU the load took
(median per run; the job's command also covers JVM start-up, so per second of application it
is somewhat more).

    python benchmarks/contention_probe.py [--rounds 10] [--cpu-ms-per-s 45] [--scale 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from record_overhead import JOB, app_seconds, environments, print_round, rotation, run

LOAD = """
import sys, time
rate, cpu_per_s = float(sys.argv[1]), float(sys.argv[2]) / 1000.0
burst, period = cpu_per_s / rate, 1.0 / rate
next_t = time.monotonic()
while True:
    start = time.thread_time()
    while time.thread_time() - start < burst:
        pass
    next_t += period
    delay = next_t - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    else:
        next_t = time.monotonic()
"""
"""Takes ``cpu_per_s`` of CPU time each second in ``rate`` bursts, counted as CPU time (a burst
that is preempted still takes its full CPU), until killed."""

VARIANTS = {"many": 250.0, "few": 4.0}
"""Bursts per second: JFR's sampler wakes 200 times a second, py-spy 50 per Python process."""


def loaded_run(job: list[str], env: dict[str, str], rate: float, cpu_ms: float) -> float:
    """Run the job next to the load; returns the CPU seconds the load took."""
    load = subprocess.Popen([sys.executable, "-c", LOAD, str(rate), str(cpu_ms)])
    try:
        run(job, env)
    finally:
        load.kill()
        _, _, usage = os.wait4(load.pid, 0)
        load.returncode = -9
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--cpu-ms-per-s", type=float, default=45.0)
    parser.add_argument("--scale", type=float, default=3.0)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="perfmodel-probe-"))
    _, env, events = environments(tmp)  # plain runs, each with its event log
    job = [sys.executable, str(JOB), str(tmp / "work"), str(args.scale)]
    names = ["plain", *VARIANTS]
    apps: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    try:
        events.mkdir()
        run(job, env)  # warm-up: page cache, the input file
        for i in range(args.rounds):
            for name in rotation(names, i):
                shutil.rmtree(events, ignore_errors=True)
                events.mkdir()
                if name == "plain":
                    run(job, env)
                    cpu[name].append(0.0)
                else:
                    cpu[name].append(loaded_run(job, env, VARIANTS[name], args.cpu_ms_per_s))
                apps[name].append(app_seconds(events))
            notes = {n: f"load CPU {statistics.median(cpu[n]):.2f} s  " for n in names}
            print_round(i, apps, notes)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
