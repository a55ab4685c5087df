"""The Dask front end on hand-built task streams whose profile and replay are known."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import perfmodel
from perfmodel.analysis import read
from perfmodel.dag.decomposition import decompose_table
from perfmodel.dask.build import build
from perfmodel.dask.frontend import is_dask_bundle, read_dask_bundle
from perfmodel.dask.stream import read_stream
from perfmodel.errors import PerfmodelError
from perfmodel.profile.bundle import DASK_DIR, read_manifest
from perfmodel.report.base import ProfileSource
from perfmodel.report.text.prediction import render_sweep
from perfmodel.simulate.config import ConfigError, WhatIf
from tests.unit.dask_streams import (
    T0,
    WORKER_A,
    WORKER_B,
    A,
    B,
    StreamBuilder,
    key,
    two_stage,
)

MS = 1000.0


def _profile(builder: StreamBuilder, tmp_path: Path, host_cores: int | None = 2):
    builder.write(tmp_path)
    return build(read_stream(tmp_path), host_cores=host_cores)


def test_jobs_stages_and_tasks_of_a_two_stage_graph(tmp_path: Path) -> None:
    built = _profile(two_stage(), tmp_path)
    p = built.profile
    assert p.framework == "dask" and p.framework_version == "2026.8.0" and p.complete
    # The run is what the script measured: submitted at 0.5 s, result received at 1.0 s.
    assert p.start_ms == (T0 + 0.5) * MS and p.end_ms == (T0 + 1.0) * MS
    (job,) = p.jobs.values()
    assert (job.submit_ms, job.complete_ms, job.result) == (p.start_ms, p.end_ms, "SUCCEEDED")
    a, b = p.stages[(0, 0)], p.stages[(1, 0)]
    assert (a.name, a.num_tasks, a.details) == ("a", 2, A)
    assert (b.name, b.num_tasks, b.parent_stage_ids) == ("b", 1, [0])
    assert list(p.stage_graph.edges()) == [(0, 1)]
    # a is ready when the job's first task started; b (which began after a ended) when a
    # completed: slots, not a lag, then decide when it runs.
    assert a.submit_ms == (T0 + 0.6) * MS and b.submit_ms == (T0 + 0.8) * MS
    t = b.table
    assert t.launch_ms[0] == pytest.approx((T0 + 0.81) * MS)
    assert t.finish_ms[0] == pytest.approx((T0 + 0.92) * MS)
    assert t.run_ms[0] == pytest.approx(110.0)
    assert t.cpu_ms[0] == pytest.approx(100.0) and t.has_cpu_time[0]
    assert t.shuffle_write_ms[0] == pytest.approx(10.0)  # spilling its result
    assert t.shuffle_read_bytes[0] == 10_000 and t.shuffle_remote_read_bytes[0] == 0
    assert (t.memory_spill_bytes[0], t.disk_spill_bytes[0]) == (5000, 3000)
    assert built.task_end_reasons == {"Success": 3}


def test_resources_say_where_each_value_came_from(tmp_path: Path) -> None:
    r = _profile(two_stage(), tmp_path).profile.resources
    assert (r.executor_instances, r.executor_cores, r.total_slots, r.hosts) == (1, 2, 2, 1)
    assert r.executor_memory_bytes == 1 << 30 and r.hosts_fixed and not r.local_mode
    assert r.sources["executor_cores"].startswith("recorded: threads per worker")
    assert r.sources["executor_memory_bytes"].startswith("recorded: worker memory limit")
    assert "local cluster" in r.sources["hosts"]


def test_without_the_host_size_hosts_are_not_taken_as_fixed(tmp_path: Path) -> None:
    r = _profile(two_stage(), tmp_path, host_cores=None).profile.resources
    assert not r.hosts_fixed


def test_transfers_are_network_wait_and_remote_bytes(tmp_path: Path) -> None:
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    s.worker(WORKER_B, pid=21, nthreads=1)
    a0, b0 = key(A, 0), key(B, 0)
    s.submit(0.0, [b0], [a0, b0])
    s.task(a0, WORKER_A, 1, (0.1, 0.3), cpu=0.2, nbytes=8000)
    # The transfer ended 50 ms before the function started: only its 20 ms count.
    s.task(b0, WORKER_B, 5, (0.4, 0.5), cpu=0.1, deps=[a0], transfer=(0.33, 0.35))
    s.gathered(0.6, [b0])
    s.close(1.0)
    t = _profile(s, tmp_path).profile.stages[(1, 0)].table
    assert t.shuffle_fetch_wait_ms[0] == pytest.approx(20.0)
    assert t.launch_ms[0] == pytest.approx((T0 + 0.38) * MS)
    assert (t.shuffle_read_bytes[0], t.shuffle_remote_read_bytes[0]) == (8000, 8000)


def test_the_workers_overhead_around_a_task_is_scheduling_time(tmp_path: Path) -> None:
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    s.submit(0.0, [key(A, 0)], [key(A, 0)])
    # Took its thread 5 ms before the function started; stored 3 ms after it ended.
    s.task(key(A, 0), WORKER_A, 1, (0.1, 0.2), cpu=0.1, began=0.095, stored=0.203)
    s.close(0.5)
    t = _profile(s, tmp_path).profile.stages[(0, 0)].table
    assert t.launch_ms[0] == pytest.approx((T0 + 0.095) * MS)
    assert t.finish_ms[0] == pytest.approx((T0 + 0.203) * MS)
    assert t.run_ms[0] == pytest.approx(100.0)
    assert decompose_table(t).scheduling[0] == pytest.approx(8.0)


def test_a_task_holds_its_thread_from_when_both_were_ready(tmp_path: Path) -> None:
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    x, y, z = key(A, 0), key(A, 1), key(A, 2)
    s.submit(0.0, [x, y, z], [x, y, z])
    # x was ready at 0.05 on an unused thread: it holds it from then (the worker took 40 ms
    # to start it).
    s.task(x, WORKER_A, 1, (0.10, 0.20), cpu=0.1, began=0.09, ready=0.05)
    # y was ready while x ran: it holds the thread from x's end (0.20), 4 ms before it began.
    s.task(y, WORKER_A, 1, (0.25, 0.30), cpu=0.05, began=0.24, ready=0.15)
    # z became ready only at 0.40 (the thread idled since 0.30): it holds it from then.
    s.task(z, WORKER_A, 1, (0.45, 0.50), cpu=0.05, began=0.42, ready=0.40)
    s.close(1.0)
    t = _profile(s, tmp_path).profile.stages[(0, 0)].table
    assert t.launch_ms.tolist() == pytest.approx([(T0 + v) * MS for v in (0.05, 0.20, 0.40)])
    assert decompose_table(t).scheduling.tolist() == pytest.approx([50.0, 50.0, 50.0])


def test_a_transfer_beside_another_task_holds_no_thread(tmp_path: Path) -> None:
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    s.worker(WORKER_B, pid=21, nthreads=1)
    x, y, z = key(A, 0), key(A, 1), key(B, 0)
    s.submit(0.0, [z], [x, y, z])
    s.task(x, WORKER_A, 1, (0.1, 0.2), cpu=0.1)
    s.task(y, WORKER_B, 5, (0.1, 0.3), cpu=0.2)
    # z's input x arrived while y ran on B's only thread (0.25–0.29): no wait counted;
    # then z ran right after y.
    s.task(z, WORKER_B, 5, (0.3, 0.4), cpu=0.1, deps=[x], transfer=(0.25, 0.29))
    s.close(1.0)
    t = _profile(s, tmp_path).profile.stages[(1, 0)].table
    assert t.shuffle_fetch_wait_ms[0] == 0.0 and t.launch_ms[0] == pytest.approx((T0 + 0.3) * MS)
    assert t.run_ms[0] == pytest.approx(100.0)


def test_tasks_without_a_recorded_graph_form_a_job_of_their_own(tmp_path: Path) -> None:
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    s.task(key(A, 0), WORKER_A, 1, (0.1, 0.2), cpu=0.1)
    s.close(0.5)
    p = _profile(s, tmp_path).profile
    assert len(p.jobs) == 1 and p.jobs[0].submit_ms == (T0 + 0.1) * MS
    assert any("no recorded graph" in w for w in p.warnings)


def test_a_key_recomputed_by_a_later_graph_keeps_each_run_in_its_own_job(tmp_path: Path) -> None:
    """Two compute() calls over the same array chunks: the second graph holds the first's
    keys again (Dask released them) and recomputes them. A run of a key that began before
    the second graph was submitted, even a moment before, is the first job's; its rerun
    after, the second's. (A graph received up to a second after a task began still owns it
    where no graph came before: the scheduler's clock.)"""
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    first, rerun = key(A, 0), key(A, 1)
    s.submit(0.0, [first], [first, rerun])
    s.task(first, WORKER_A, 1, (0.1, 0.5), cpu=0.4)
    s.task(rerun, WORKER_A, 1, (0.5, 0.9), cpu=0.4)  # ends 0.1 s before the next graph
    s.gathered(0.95, [first])
    s.submit(1.0, [rerun], [rerun])
    s.task(rerun, WORKER_A, 1, (1.1, 1.5), cpu=0.4)
    s.gathered(1.6, [rerun])
    s.close(2.0)
    p = _profile(s, tmp_path).profile
    job_of_run = sorted(
        (float(launch), stage.job_ids[0])
        for stage in p.stages.values()
        for launch in stage.table.launch_ms
    )
    assert [job for _, job in job_of_run] == [0, 0, 1]
    assert p.jobs[0].complete_ms == pytest.approx((T0 + 0.95) * MS)
    # The second graph came with the thread idle: its first task's start says when it ran.
    assert p.stages[(1, 0)].submit_ms == pytest.approx((T0 + 1.1) * MS)


def test_a_result_stored_after_the_next_task_began_does_not_hold_the_thread(
    tmp_path: Path,
) -> None:
    """The worker's event loop stores a result late (it waits for the interpreter lock
    behind the threads) while the thread already runs the next task: the first task held
    the thread only until its function ended, not until its result was stored."""
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    names = [key(A, i) for i in range(3)]
    s.submit(0.0, names, names)
    s.task(names[0], WORKER_A, 1, (0.1, 0.3), cpu=0.2, began=0.1, stored=0.45)
    s.task(names[1], WORKER_A, 1, (0.3, 0.5), cpu=0.2, began=0.3, stored=0.52)
    s.task(names[2], WORKER_A, 1, (0.55, 0.7), cpu=0.15, began=0.53, stored=0.72, ready=0.4)
    s.gathered(0.75, names)
    s.close(1.0)
    t = _profile(s, tmp_path).profile.stages[(0, 0)].table
    assert list(t.finish_ms - T0 * MS) == pytest.approx([300.0, 520.0, 720.0])
    # Stored before the next task, ready since 0.4 s, began: the storing was the thread's
    # time (scheduling), and the next task held the thread from then.
    assert t.launch_ms[2] == pytest.approx((T0 + 0.52) * MS)


def test_a_scheduler_that_never_closed_makes_an_incomplete_profile(tmp_path: Path) -> None:
    s = two_stage()
    s.scheduler = [r for r in s.scheduler if r["e"] != "close"]
    p = _profile(s, tmp_path).profile
    assert not p.complete and any("did not close" in w for w in p.warnings)


def test_an_erred_task_fails_its_stage_and_job(tmp_path: Path) -> None:
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    s.submit(0.0, [key(A, 0)], [key(A, 0)])
    s.task(key(A, 0), WORKER_A, 1, (0.1, 0.2), status="erred")
    s.close(0.5)
    built = _profile(s, tmp_path)
    assert built.task_end_reasons == {"erred": 1}
    assert built.profile.stages[(0, 0)].status == "FAILED"
    assert built.profile.jobs[0].result == "FAILED"


def test_facade_replays_the_baseline_and_a_what_if_exactly(tmp_path: Path) -> None:
    """Known answer: the baseline replay keeps the 100 ms start-up and the 80 ms until the
    result was received, and packs the tasks: a 0–200 ms on two threads, b 110 ms → 0.49 s
    (observed 0.50 s: b started 10 ms after a ended). On one thread the two a tasks run one
    after the other (each had its own core before: no contention either way) → 0.69 s."""
    bundle = two_stage().bundle(tmp_path / "b")
    assert is_dask_bundle(bundle)
    analysis = perfmodel.load(bundle)
    assert analysis.profile.framework == "dask"
    base = analysis.predict()
    assert base.observed_s == pytest.approx(0.5)
    assert base.baseline_replay_s == pytest.approx(0.49)
    one = analysis.predict(WhatIf(executor_cores=1))
    assert one.predicted_s == pytest.approx(0.69)
    assert analysis.slot_only_s(WhatIf(executor_cores=1)) == pytest.approx(0.69)


def test_spark_s_dynamic_allocation_is_refused_for_a_dask_profile(tmp_path: Path) -> None:
    """Replaying Spark's allocation policy for Dask workers would predict a change the
    what-if does not show; its adaptive scaling is not modelled, so the options are refused."""
    analysis = perfmodel.load(two_stage().bundle(tmp_path / "b"))
    for change in (WhatIf(dynamic_allocation=True), WhatIf(max_executors=100)):
        with pytest.raises(ConfigError, match="Spark's dynamic allocation; a dask profile"):
            analysis.predict(change)
    with pytest.raises(ConfigError, match="--max-executors"):
        analysis.sweep(["max-executors=1,2"])
    assert analysis.predict(WhatIf(executors=2)).config.executors == 2


def test_a_sweep_table_names_its_axes_in_dask_s_words(tmp_path: Path) -> None:
    analysis = perfmodel.load(two_stage().bundle(tmp_path / "b"))
    points = [p.summary() for p in analysis.sweep(["workers=1,2", "threads=1,2"])]
    header = render_sweep(points, ProfileSource(str(tmp_path / "b"), False)).splitlines()[4]
    assert header.split()[:2] == ["workers", "threads"]


def test_the_application_ends_after_every_job_not_only_the_last_seen(tmp_path: Path) -> None:
    """Two futures' graphs on one thread: the short job's second task waited behind the long
    job's task and ended last. With two threads it runs at once and its job ends first; the
    application still waits for the long one (it ended only after both had)."""
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    long, first, second = key(A, 0), key(B, 0), key(B, 1)
    s.submit(0.0, [long], [long])
    s.submit(0.0, [second], [first, second])
    s.task(first, WORKER_A, 1, (0.0, 0.05), cpu=0.05)
    s.task(long, WORKER_A, 1, (0.05, 0.85), cpu=0.8)
    s.task(second, WORKER_A, 1, (0.85, 0.95), cpu=0.1, deps=[first])
    s.gathered(0.9, [long])
    s.gathered(1.0, [second])
    s.close(1.05)
    analysis = perfmodel.load(s.bundle(tmp_path / "b"))
    two = analysis.predict(WhatIf(executor_cores=2))
    assert two.predicted_s >= 0.85  # the long task alone runs from 0.05 s to 0.85 s


def test_a_bundle_with_a_damaged_or_missing_manifest_is_named_as_such(tmp_path: Path) -> None:
    """Beside a bundle's own parts, a manifest cut short is read as the bundle's (its reader
    says what is wrong with it) and a missing one is named, rather than "no event log"."""
    bundle = two_stage().bundle(tmp_path / "b")
    manifest = bundle / "manifest.json"
    manifest.write_text('{"format": "perfmodel-bundle", "format_version": 1, ')
    with pytest.raises(PerfmodelError, match=r"manifest.json is unreadable"):
        perfmodel.load(bundle)
    manifest.unlink()
    with pytest.raises(PerfmodelError, match="a perfmodel bundle's parts but no manifest.json"):
        perfmodel.load(bundle)


def test_a_worker_file_missing_from_the_recording_is_said(tmp_path: Path) -> None:
    """The manifest says how many task-stream files the recording wrote; a bundle with fewer
    (a worker's lost) warns, since its tasks' CPU then reads as time of unknown nature."""
    bundle = two_stage().bundle(tmp_path / "b")
    manifest = read_manifest(bundle)
    files = sorted((bundle / DASK_DIR).glob("*.jsonl"))
    manifest.sampling["dask"] = {"dir": DASK_DIR, "files": len(files)}
    (bundle / "manifest.json").write_text(manifest.to_json())
    assert not [w for w in perfmodel.load(bundle).profile.warnings if "missing" in w]
    (worker,) = [f for f in files if f.name.startswith("worker-")]
    worker.unlink()
    warnings = perfmodel.load(bundle).profile.warnings
    assert f"1 of the {len(files)} task-stream file(s) the recording wrote are missing" in (
        " ".join(warnings)
    )


def test_more_workers_on_a_local_cluster_share_its_cores(tmp_path: Path) -> None:
    """Two workers × two threads on the same two-core host: the four a-like tasks that ran
    alone at one core each now ask for four cores of two, so CPU work takes twice as long
    and the extra slots buy nothing."""
    analysis = perfmodel.load(_one_thread_run(None).bundle(tmp_path / "b"))
    base = analysis.predict()
    assert base.baseline_replay_s == pytest.approx(0.9)
    target = analysis.target(WhatIf(executors=2, executor_cores=2))
    assert (target.hosts, target.host_cores, target.slots) == (1, 2, 4)
    wide = analysis.predict(target)
    # 0.1 s start-up; four 200 ms tasks at once, stretched ×2 by sharing two cores → 0.4 s.
    assert wide.predicted_s == pytest.approx(0.1 + 0.4, rel=0.02)
    assert analysis.slot_only_s(target) == pytest.approx(0.3)


def test_off_cpu_time_is_unattributed(tmp_path: Path) -> None:
    built = _profile(two_stage(cpu_share=0.5), tmp_path)
    t = built.profile.stages[(0, 0)].table
    assert np.allclose(t.cpu_ms, 100.0) and np.allclose(t.run_ms, 200.0)


def test_the_facade_dispatches_dask_bundles_only(tmp_path: Path) -> None:
    assert not is_dask_bundle(tmp_path)
    bundle = two_stage().bundle(tmp_path / "b")
    loaded = read(bundle)
    assert loaded.task_end_events == 3 and loaded.profile.framework == "dask"
    assert loaded.profile.app_name == "app.py" and loaded.samples is not None
    assert read_dask_bundle(bundle).profile.app_id == loaded.profile.app_id


def test_threads_of_one_worker_share_its_interpreter_lock(tmp_path: Path) -> None:
    """Pure-Python tasks on two threads of one worker: each pair ran 0.1–0.5 s together with
    0.2 s of CPU each (the GIL let one run at a time). The lock's share is measured (0.4 s
    of run per 0.2 s of CPU, two at a time: g = 1); one thread runs them one after the other
    at their CPU time, 0.2 s each (not 0.4 s each, as the off-CPU time kept would say); two
    one-thread workers on two cores run them side by side."""
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=2)
    names = [key(A, i) for i in range(4)]
    s.submit(0.0, names, names)
    for i, name in enumerate(names):
        start = 0.1 + 0.4 * (i // 2)
        s.task(name, WORKER_A, 1 + i % 2, (start, start + 0.4), cpu=0.2)
    s.gathered(0.9, names)
    s.close(1.0)
    analysis = perfmodel.load(s.bundle(tmp_path / "b"))
    base = analysis.predict()
    assert base.baseline_replay_s == pytest.approx(0.9, rel=0.02)
    assert any("interpreter lock" in n for n in base.notes)
    one = analysis.predict(WhatIf(executor_cores=1))
    assert one.predicted_s == pytest.approx(0.1 + 4 * 0.2, rel=0.03)
    two = analysis.predict(WhatIf(executors=2, executor_cores=1))
    assert two.predicted_s == pytest.approx(0.1 + 2 * 0.2, rel=0.03)
    # The search's lower bounds see the lock too: never above what the replay predicts.
    targets = [analysis.target(WhatIf(executors=e, executor_cores=1)) for e in (1, 2)]
    bounds = analysis.lower_bounds_s(targets)
    assert bounds[0] <= one.predicted_s * 1.0001 and bounds[1] <= two.predicted_s * 1.0001
    assert bounds[0] > 0.1 + 3 * 0.2  # still a bound that says something


def _one_thread_run(lag_us: int | None) -> StreamBuilder:
    """Four tasks of 0.2 s of CPU, one after the other on a worker's one thread, with the
    worker's lock probes each ``lag_us`` late (None: a recording without probes)."""
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    names = [key(A, i) for i in range(4)]
    s.submit(0.0, names, names)
    for i, name in enumerate(names):
        s.task(name, WORKER_A, 1, (0.1 + 0.2 * i, 0.3 + 0.2 * i), cpu=0.2)
    if lag_us is not None:
        s.probes(WORKER_A, 0.0, 1.0, lag_us)
    s.gathered(0.9, names)
    s.close(1.0)
    return s


@pytest.mark.parametrize(
    ("lag_us", "share", "two_threads_s"),
    [
        (5000, 1.0, 0.1 + 4 * 0.2),  # held at every probe: a second thread gains nothing
        (100, 0.0, 0.1 + 2 * 0.2),  # never held (numpy): two threads on two cores
    ],
)
def test_a_one_thread_worker_s_lock_is_probed(
    tmp_path: Path, lag_us: int, share: float, two_threads_s: float
) -> None:
    """Four tasks of 0.2 s of CPU, one after the other on a worker's one thread: their run
    times cannot say how much of them holds the lock, the worker's lock probes do. Probes
    that waited 5 ms (the interpreter's switch interval) found it held: two threads then
    run the tasks two at a time at half speed, no faster than one; probes that got it at
    once found it free, and two threads run them side by side on the host's two cores."""
    analysis = perfmodel.load(_one_thread_run(lag_us).bundle(tmp_path / "b"))
    held = analysis.profile.extra["lock_held_ms"]
    assert held == {0: pytest.approx(share * 800.0)}
    two = analysis.predict(WhatIf(executor_cores=2))
    assert two.predicted_s == pytest.approx(two_threads_s, rel=0.03)
    note = next(n for n in two.notes if "interpreter lock" in n)
    assert f"probed for 1 stage(s) that ran one task at a time per process, {share:.0%}" in note


def test_without_probes_a_one_thread_worker_s_lock_is_not_modelled(tmp_path: Path) -> None:
    analysis = perfmodel.load(_one_thread_run(None).bundle(tmp_path / "b"))
    assert "lock_held_ms" not in analysis.profile.extra
    two = analysis.predict(WhatIf(executor_cores=2))
    assert any("was not probed" in n for n in two.notes)


def _transfer_run() -> StreamBuilder:
    """Two one-thread workers on one host: b0 on B waits 300 ms for a0's result from A."""
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    s.worker(WORKER_B, pid=21, nthreads=1)
    a0, b0 = key(A, 0), key(B, 0)
    s.submit(0.0, [b0], [a0, b0])
    s.task(a0, WORKER_A, 1, (0.1, 0.3), cpu=0.2, nbytes=8000)
    s.task(b0, WORKER_B, 5, (0.6, 0.7), cpu=0.1, deps=[a0], transfer=(0.3, 0.6))
    s.gathered(0.8, [b0])
    s.close(1.0)
    return s


def test_one_worker_fetches_nothing_from_another(tmp_path: Path) -> None:
    """Dask's workers exchange inputs over sockets on one host too: the inputs fetched
    remotely follow the workers, not the hosts (`ClusterConfig.peers`). On one worker b0
    finds a0's result in its own memory, so its 300 ms wait for the transfer goes (a
    one-host cluster kept it whatever the workers); on three workers it is kept, as how
    such a wait grows with more peers is not measured."""
    analysis = perfmodel.load(_transfer_run().bundle(tmp_path / "b"))
    base = analysis.predict()
    assert (analysis.baseline.hosts, analysis.baseline.peers) == (1, 2)
    assert analysis.target(WhatIf(executors=1)).peers == 1
    one = analysis.predict(WhatIf(executors=1))
    assert one.predicted_s == pytest.approx(base.baseline_replay_s - 0.3, abs=0.01)
    (bound,) = analysis.lower_bounds_s([analysis.target(WhatIf(executors=1))])
    assert bound <= one.predicted_s + 1e-9
    three = analysis.predict(WhatIf(executors=3))
    assert three.predicted_s == pytest.approx(base.baseline_replay_s, abs=0.01)


def test_a_one_worker_run_says_what_more_workers_would_move(tmp_path: Path) -> None:
    """One worker fetched nothing, so a prediction for two says that half of b0's 8 MB
    input would cross between them, untimed; a run that already moved data says nothing."""
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    a0, b0 = key(A, 0), key(B, 0)
    s.submit(0.0, [b0], [a0, b0])
    s.task(a0, WORKER_A, 1, (0.1, 0.3), cpu=0.2, nbytes=8_000_000)
    s.task(b0, WORKER_A, 1, (0.3, 0.4), cpu=0.1, deps=[a0])
    s.gathered(0.5, [b0])
    s.close(0.6)
    one = perfmodel.load(s.bundle(tmp_path / "one"))
    said = [n for n in one.predict(WhatIf(executors=2)).notes if n.startswith("new transfers")]
    assert said and "on 2 workers about 4.0 MB" in said[0], said
    assert not [n for n in one.predict(WhatIf(executor_cores=2)).notes if "new transfers" in n]
    two = perfmodel.load(_transfer_run().bundle(tmp_path / "two"))
    assert not [n for n in two.predict(WhatIf(executors=3)).notes if "new transfers" in n]


def _pipelined(lag: float = 0.0) -> StreamBuilder:
    """One worker, one thread, tasks that wait off CPU (no core or lock to share): a0, then
    b0 reading it, then a1 and a long a2, then b1 reading both, ``lag`` s after a2 ended
    (the scheduler's round trip: b1 could run only then). Stage b began before stage a
    ended, so no stage barrier holds it; its tasks' inputs do."""
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    a0, a1, a2, b0, b1 = key(A, 0), key(A, 1), key(A, 2), key(B, 0), key(B, 1)
    s.submit(0.5, [b0, b1], [a0, a1, a2, b0, b1])
    s.task(a0, WORKER_A, 1, (0.52, 0.62), cpu=0.0)
    s.task(b0, WORKER_A, 1, (0.62, 0.72), cpu=0.0, deps=[a0])
    s.task(a1, WORKER_A, 1, (0.72, 0.82), cpu=0.0)
    s.task(a2, WORKER_A, 1, (0.82, 1.12), cpu=0.0)
    b1_at = (1.12 + lag, 1.22 + lag)
    s.task(b1, WORKER_A, 1, b1_at, cpu=0.0, deps=[a1, a2], ready=b1_at[0], began=b1_at[0])
    s.gathered(1.25 + lag, [b0, b1])
    s.close(1.5)
    return s


def test_each_task_records_the_tasks_it_read(tmp_path: Path) -> None:
    p = _profile(_pipelined(), tmp_path).profile
    a, b = p.stages[(0, 0)], p.stages[(1, 0)]
    assert a.inputs is not None and a.inputs.ptr.tolist() == [0, 0, 0, 0]
    assert b.inputs is not None and b.inputs.ptr.tolist() == [0, 1, 3]
    # b0 read a's first row (a0); b1 its second and third (a1, a2), each in stage a.
    assert b.inputs.stage_ids.tolist() == [0, 0, 0] and b.inputs.rows.tolist() == [0, 1, 2]
    assert b.submit_ms == p.start_ms + 20.0  # ready with the job's first task


def test_a_task_starts_only_once_the_tasks_it_read_have_ended(tmp_path: Path) -> None:
    """Known answer. On one thread the replay is the run: 0.75 s. On three, a's tasks run at
    once from 0.02 s and a2 ends at 0.32 s; b0 runs once a0 ends, b1 only once a2 has, from
    0.32 to 0.42 s; the result is received 30 ms later: 0.45 s. Without the tasks' inputs
    (the stages as independent) b1 ran at 0.12 s and the prediction was 0.35 s."""
    analysis = perfmodel.load(_pipelined().bundle(tmp_path / "b"))
    assert analysis.predict().baseline_replay_s == pytest.approx(0.75)
    three = analysis.predict(WhatIf(executor_cores=3))
    assert three.predicted_s == pytest.approx(0.45)
    assert analysis.slot_only_s(WhatIf(executor_cores=3)) == pytest.approx(0.45)


def test_a_task_keeps_its_delay_after_its_inputs_ended(tmp_path: Path) -> None:
    """b1 could run only 40 ms after a2 ended (the scheduler's round trip). On one thread the
    replay keeps that idle gap: 0.79 s as observed, not 0.75 s. On three threads a2 ends at
    0.32 s and b1 runs from 0.36 to 0.46 s: 0.49 s. More threads hide such a delay behind
    other work; they do not shorten it."""
    analysis = perfmodel.load(_pipelined(lag=0.04).bundle(tmp_path / "b"))
    p = analysis.profile
    assert p.stages[(1, 0)].inputs.lag_ms.tolist() == pytest.approx([0.0, 40.0])
    assert analysis.predict().baseline_replay_s == pytest.approx(0.79)
    assert analysis.predict(WhatIf(executor_cores=3)).predicted_s == pytest.approx(0.49)


@pytest.mark.timeout(60)
def test_an_event_before_a_task_s_inputs_end_does_not_stall_the_replay(tmp_path: Path) -> None:
    """On two threads b1 waits for a2 until 0.42 s while a thread is free from 0.22 s, and a
    second graph is submitted at 0.30 s, between the two: the replay fires the submission and
    goes on (it once kept trying to place b1 before that event, forever). The second graph
    came while the run's one thread was busy, so its task's wait (0.42 s) was for the
    thread: on two threads it runs at once, and the run ends with b1's result, 0.55 s."""
    s = _pipelined()
    c0 = key("c-00112233445566ff", 0)
    s.submit(0.8, [c0], [c0])
    s.task(c0, WORKER_A, 1, (1.22, 1.27), cpu=0.0)
    s.gathered(1.3, [c0])
    analysis = perfmodel.load(s.bundle(tmp_path / "b"))
    # Ready when the scheduler had the graph (0.81 s) plus the first graph's delay (10 ms).
    assert analysis.profile.stages[(2, 0)].submit_ms == pytest.approx((T0 + 0.82) * MS)
    assert analysis.predict().baseline_replay_s == pytest.approx(0.8)
    assert analysis.predict(WhatIf(executor_cores=2)).predicted_s == pytest.approx(0.55)


def test_a_task_waits_for_inputs_from_its_own_stage(tmp_path: Path) -> None:
    """A tree inside one task group: m0 merges a0 and a1, m1 merges a2 and a3, m2 merges m0
    and m1 (m2 is in m's group, as a `dask.delayed` tree of one function is). Each task
    takes 0.1 s off CPU. On two threads: a0 and a1 from 0.02 s; m0 (launched before a2 in
    the run) and a2 from 0.12 s; a3 from 0.22 s; m1 once a3 ends, 0.32–0.42 s; m2 once m1
    ends, 0.42–0.52 s; the result 30 ms later, 0.55 s. Had m2 not waited for its own
    stage's tasks, it would have run beside m1 from 0.22 s: 0.45 s."""
    s = StreamBuilder()
    s.worker(WORKER_A, pid=20, nthreads=1)
    a = [key(A, i) for i in range(4)]
    m = [key(B, i) for i in range(3)]
    s.submit(0.5, [m[2]], [*a, *m])
    order = [(a[0], []), (a[1], []), (m[0], a[:2]), (a[2], []), (a[3], []), (m[1], a[2:])]
    order.append((m[2], m[:2]))
    for n, (name, deps) in enumerate(order):
        at = 0.52 + 0.1 * n
        s.task(name, WORKER_A, 1, (at, at + 0.1), cpu=0.0, deps=deps, ready=at, began=at)
    s.gathered(1.25, [m[2]])
    s.close(1.5)
    analysis = perfmodel.load(s.bundle(tmp_path / "b"))
    assert analysis.predict().baseline_replay_s == pytest.approx(0.75)
    assert analysis.predict(WhatIf(executor_cores=2)).predicted_s == pytest.approx(0.55)


def test_a_worker_that_left_after_every_task_ended_is_not_lost(tmp_path: Path) -> None:
    """The cluster shut down (its worker removed at 1.24 s) after the last task ended
    (1.22 s) but before the client's record of receiving the result (1.25 s): the worker
    left with the cluster, and a replay that runs the tasks slower still has it."""
    s = _pipelined()
    s.scheduler = [r for r in s.scheduler if r["e"] not in ("worker-removed", "close")]
    s.close(1.24)
    analysis = perfmodel.load(s.bundle(tmp_path / "b"))
    assert analysis.profile.executors[WORKER_A].removed_ms is None
    assert analysis.predict().baseline_replay_s == pytest.approx(0.75)
    assert analysis.predict(WhatIf(executor_cores=1, cores=1)).predicted_s >= 0.75
