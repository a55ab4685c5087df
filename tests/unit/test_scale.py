"""Production-sized DAGs in memory: 20,000 stages, 5,000 jobs, and the answers on them.

Every step from profile to report must be O(n log n): a quadratic step on these shapes
takes minutes, a cubic one hours. The checks here are on the answers (the critical path
against a reference walk, the findings, the replay reproducing a self-consistent
profile); wall-clock time is never asserted (benchmarks/ measure speed).
"""

from __future__ import annotations

import random

import pytest

from perfmodel.analysis.critical_path import CRITICAL_SLACK_MS, critical_path
from perfmodel.analysis.diagnosis import diagnose
from perfmodel.dag.model import ApplicationProfile, StageNode
from perfmodel.dag.tasks import TaskTable
from perfmodel.simulate.replay import replay
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic

N_JOBS = 5_000
STAGES_PER_JOB = 4  # 20,000 stages


def _reference_critical_path(profile: ApplicationProfile) -> list[int]:
    """The original walk (list scans; cubic), kept as the specification."""
    ran = [
        s
        for s in profile.stages.values()
        if s.submit_ms is not None and s.complete_ms is not None and s.status != "SKIPPED"
    ]
    if not ran:
        return []
    ran.sort(key=lambda s: s.complete_ms or 0.0)
    current = ran[-1]
    chain = [current]
    while True:
        submit = current.submit_ms or 0.0
        before = [
            s
            for s in ran
            if s is not current
            and (s.complete_ms or 0.0) <= submit + CRITICAL_SLACK_MS
            and all(s is not c for c in chain)
        ]
        if not before:
            break
        parents = set(current.parent_stage_ids)
        latest = max(s.complete_ms or 0.0 for s in before)
        near = [s for s in before if (s.complete_ms or 0.0) >= latest - CRITICAL_SLACK_MS]
        preferred = [s for s in near if s.stage_id in parents] or near
        current = max(preferred, key=lambda s: (s.complete_ms or 0.0, s.stage_id))
        chain.append(current)
    chain.reverse()
    return [s.stage_id for s in chain]


def _random_profile(rng: random.Random, n: int, attempts: bool) -> ApplicationProfile:
    """Stages with coarse times (many ties within the slack), random parents, retries."""
    p = ApplicationProfile(app_id="random", start_ms=0.0, end_ms=1000.0, complete=True)
    for sid in range(n):
        for attempt in range(rng.choice((1, 1, 1, 2)) if attempts else 1):
            submit = float(rng.randrange(0, 200, 3))
            done = submit + rng.choice((0.0, 1.0, 4.0, 5.0, 6.0, 20.0))
            parents = rng.sample(range(sid), min(sid, rng.randrange(0, 3)))
            p.stages[(sid, attempt)] = StageNode(
                stage_id=sid,
                attempt=attempt,
                name=str(sid),
                num_tasks=1,
                parent_stage_ids=parents,
                submit_ms=submit,
                complete_ms=done,
                status=rng.choice(("COMPLETE", "COMPLETE", "FAILED", "SKIPPED")),
            )
    return p


@pytest.mark.parametrize("seed", range(40))
def test_critical_path_matches_the_reference_walk(seed: int) -> None:
    rng = random.Random(seed)
    p = _random_profile(rng, rng.randrange(1, 80), attempts=seed % 2 == 0)
    assert critical_path(p).stage_ids == _reference_critical_path(p)


def _many_jobs() -> ApplicationProfile:
    """5,000 jobs of 4 stages (a diamond: 0 → 1, 2 → 3), 2 tasks each, 20 ms apart."""
    task = TaskSpec(run_ms=40.0, cpu_ms=30.0, gc_ms=2.0, overhead_ms=5.0)
    jobs = []
    for j in range(N_JOBS):
        base = j * STAGES_PER_JOB
        jobs.append(
            [
                StageSpec(base, [task, task]),
                StageSpec(base + 1, [task, task], parents=[base]),
                StageSpec(base + 2, [task], parents=[base]),
                StageSpec(base + 3, [task, task], parents=[base + 1, base + 2]),
            ]
        )
    return build_synthetic(jobs, slots=2, driver_gap_ms=20.0)


@pytest.fixture(scope="module")
def many_jobs() -> ApplicationProfile:
    return _many_jobs()


def test_twenty_thousand_stage_critical_path(many_jobs: ApplicationProfile) -> None:
    p = many_jobs
    assert len(p.stages) == N_JOBS * STAGES_PER_JOB and len(p.jobs) == N_JOBS
    path = critical_path(p)
    # Every job's diamond runs 0 → 2 → 3 (stage 2's one task waits for a slot behind
    # stage 1's two, so it finishes last), and the next job waits for the last stage.
    assert path.stage_ids == [j * 4 + k for j in range(N_JOBS) for k in (0, 2, 3)]
    assert path.gaps_s == pytest.approx(N_JOBS * 20.0 / 1000.0)
    assert path.stage_s + path.gaps_s == pytest.approx(p.duration_ms / 1000.0)


def test_twenty_thousand_stage_replay_reproduces_the_run(many_jobs: ApplicationProfile) -> None:
    prediction = replay(many_jobs)
    assert prediction.n_tasks == sum(len(s.table) for s in many_jobs.stages.values())
    assert prediction.baseline_replay_s == pytest.approx(many_jobs.duration_ms / 1000.0)
    assert prediction.model_error == pytest.approx(0.0, abs=1e-9)


def test_twenty_thousand_stage_diagnosis(many_jobs: ApplicationProfile) -> None:
    from pathlib import Path

    from perfmodel.dag.loaded import LoadedProfile
    from perfmodel.profile.eventlog import EventLogSource

    loaded = LoadedProfile(
        profile=many_jobs,
        source=EventLogSource(path=Path("synthetic"), app_key="synthetic", parts=[], attempt=None),
    )
    d = diagnose(loaded)
    assert len(d.stages) == N_JOBS * STAGES_PER_JOB
    n_tasks = 7 * N_JOBS
    assert sum(s.tasks_run for s in d.stages) == n_tasks
    assert d.task_time_s == pytest.approx(n_tasks * 45.0 / 1000.0)
    assert d.decomposition["cpu"] == pytest.approx(n_tasks * 30.0 / 1000.0)
    assert d.decomposition["scheduling"] == pytest.approx(n_tasks * 5.0 / 1000.0)
    assert d.spark_metrics["executorRunTime"] == n_tasks * 40
    assert d.spark_metrics["executorCpuTime"] == n_tasks * 30 * 1_000_000
    assert len(d.critical_path) == 3 * N_JOBS
    assert any(f.startswith("Critical path: stages 0 → 2 → 3 → 4") for f in d.findings)
    assert all(s.skew is None or s.skew == pytest.approx(1.0) for s in d.stages)


def test_task_table_round_trips_task_runs(many_jobs: ApplicationProfile) -> None:
    stage = many_jobs.stages[(7, 0)]
    runs = stage.tasks
    again = TaskTable.from_runs(runs).runs()
    assert again == runs
    assert [t.task_id for t in many_jobs.tasks()[:4]] == [0, 1, 2, 3]
