"""Replay speed in tasks per second on a large synthetic DAG (target ≥ 500k tasks/s).

Why: sweeps and diagnose's advice replay one profile many times, so the replay must stay
fast on logs with hundreds of thousands of tasks. Prints figures; asserts nothing.
Run: ``python benchmarks/replay_speed.py [--tasks 200000] [--slots 64] [--task-inputs]``.
``--task-inputs`` gives each task of a stage with parents one task of each parent to read
(`TaskInputs`, as a Dask profile has them), so the replay places tasks one at a time.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from perfmodel.dag.model import ApplicationProfile, TaskInputs
from perfmodel.simulate.config import WhatIf, apply_what_if, baseline_config
from perfmodel.simulate.replay import replay_baseline, replay_workload
from perfmodel.simulate.rescale import all_stage_times
from perfmodel.simulate.scheduler import run_schedule
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.workload import compile_workload


def make_jobs(n_tasks: int, seed: int) -> list[list[StageSpec]]:
    """Jobs of 4 stages (two map branches, a join, a reduce) with skewed task times."""
    rng = random.Random(seed)
    jobs: list[list[StageSpec]] = []
    stage_id = 0
    total = 0
    while total < n_tasks:
        stages: list[StageSpec] = []
        widths = [rng.choice((100, 200, 400)), rng.choice((100, 200)), 200, 50]
        ids = list(range(stage_id, stage_id + 4))
        parents = [(), (), (ids[0], ids[1]), (ids[2],)]
        for sid, width, par in zip(ids, widths, parents, strict=True):
            tasks = []
            for _ in range(width):
                run = rng.lognormvariate(5.0, 0.6)
                tasks.append(
                    TaskSpec(
                        run_ms=run,
                        cpu_ms=run * rng.uniform(0.3, 0.9),
                        gc_ms=run * 0.05,
                        shuffle_write_ms=run * rng.uniform(0.0, 0.1),
                        overhead_ms=rng.uniform(1.0, 5.0),
                    )
                )
            stages.append(StageSpec(sid, tasks, par))
            total += width
        stage_id += 4
        jobs.append(stages)
    return jobs


def with_task_inputs(profile: ApplicationProfile) -> None:
    """Task ``i`` of each stage with parents reads task ``i mod n`` of each parent."""
    widths = {stage.stage_id: stage.num_tasks for stage in profile.stages.values()}
    for stage in profile.stages.values():
        parents = sorted(stage.parent_stage_ids)
        n = stage.num_tasks
        rows = np.arange(n)
        stage.inputs = TaskInputs(
            ptr=np.arange(n + 1, dtype=np.int64) * len(parents),
            stage_ids=np.tile(np.array(parents, dtype=np.int64), n),
            rows=np.stack([rows % widths[p] for p in parents], axis=1).reshape(-1)
            if parents
            else np.zeros(0, dtype=np.int64),
            lag_ms=np.zeros(n),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=200_000)
    parser.add_argument("--slots", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--task-inputs", action="store_true")
    args = parser.parse_args()

    t0 = time.perf_counter()
    profile = build_synthetic(make_jobs(args.tasks, seed=1), args.slots, driver_gap_ms=50)
    if args.task_inputs:
        with_task_inputs(profile)
    t1 = time.perf_counter()
    base = baseline_config(profile)
    workload = compile_workload(profile, base)
    t2 = time.perf_counter()
    n = workload.n_tasks
    print(f"DAG: {n} tasks, {len(workload.stages)} stages, {args.slots} slots")
    print(
        f"build synthetic profile: {t1 - t0:.2f} s; compile: {t2 - t1:.2f} s "
        f"({n / (t2 - t1):,.0f} tasks/s)"
    )

    target = apply_what_if(base, WhatIf(cores=args.slots * 2))
    durations = [t.durations.tolist() for t in all_stage_times(workload.stages, base, target)]
    best_sched = best_rescale = best_full = best_point = float("inf")
    done = replay_baseline(workload, base)
    for _ in range(args.repeat):
        a = time.perf_counter()
        all_stage_times(workload.stages, base, target)
        b = time.perf_counter()
        run_schedule(workload, durations, target.slots)
        c = time.perf_counter()
        replay_workload(workload, base, target)
        d = time.perf_counter()
        replay_workload(workload, base, target, done)
        e = time.perf_counter()
        best_point = min(best_point, e - d)
        best_rescale = min(best_rescale, b - a)
        best_sched = min(best_sched, c - b)
        best_full = min(best_full, d - c)
    print(
        f"rescale (laws) only:   {n / best_rescale:>12,.0f} tasks/s ({best_rescale * 1e3:.0f} ms)"
    )
    print(f"schedule only:         {n / best_sched:>12,.0f} tasks/s ({best_sched * 1e3:.0f} ms)")
    print(
        f"replay_workload:       {n / best_full:>12,.0f} tasks/s ({best_full * 1e3:.0f} ms; "
        "baseline self-check + what-if, i.e. two schedules)"
    )
    print(
        f"sweep point:           {n / best_point:>12,.0f} tasks/s ({best_point * 1e3:.0f} ms; "
        "baseline shared, one rescale + schedule)"
    )


if __name__ == "__main__":
    main()
