"""Hand-built application profiles with known answers, for tests and the speed benchmark.

Real logs cannot give exact expectations ("8 equal tasks on 2 slots take 4 rounds"), and
a ≥100k-task log is not something to ship; both are built here from plain parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from perfmodel.dag.model import ApplicationProfile, JobNode, ResourceConfig, StageNode
from perfmodel.dag.tasks import TaskColumns, TaskMetrics, TaskRun, TaskTable


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """One task's measured time split (ms) and bytes; wall = run + overhead."""

    run_ms: float
    cpu_ms: float = 0.0
    gc_ms: float = 0.0
    fetch_wait_ms: float = 0.0
    shuffle_write_ms: float = 0.0
    overhead_ms: float = 0.0
    peak_memory: int = 0
    memory_spill: int = 0
    disk_spill: int = 0
    remote_read: int = 0
    """Shuffle bytes fetched from other hosts."""
    input_bytes: int = 0
    shuffle_write: int = 0
    """Shuffle bytes written."""


@dataclass(frozen=True, slots=True)
class StageSpec:
    """A stage: its tasks and its parent stage ids (which must come earlier)."""

    stage_id: int
    tasks: Sequence[TaskSpec]
    parents: Sequence[int] = field(default_factory=tuple)


def build_synthetic(
    jobs: Sequence[Sequence[StageSpec]],
    slots: int,
    *,
    master: str | None = None,
    driver_gap_ms: float = 0.0,
    memory_bytes: int = 1 << 30,
) -> ApplicationProfile:
    """A profile as if the jobs had run one after another on ``slots`` slots of one host.

    Times are laid out by the same greedy rule Spark uses (each task takes the earliest
    free slot, stages start when their parents end, slots are shared by all stages), so
    the profile is self-consistent and the replay of its baseline must reproduce it.
    """
    profile = ApplicationProfile(app_id="synthetic", start_ms=0.0, complete=True)
    profile.resources = ResourceConfig(
        master=master or f"local[{slots}]",
        executor_instances=1,
        executor_cores=slots,
        driver_memory_bytes=memory_bytes,
        executor_memory_bytes=memory_bytes,
        local_mode=True,
        total_slots=slots,
        hosts=1,
    )
    now = 0.0
    tid = 0
    pending: list[tuple[StageNode, list[TaskRun]]] = []
    free = [0.0] * slots
    for job_id, stages in enumerate(jobs):
        now += driver_gap_ms
        job = JobNode(job_id=job_id, submit_ms=now, result="SUCCEEDED")
        done: dict[int, float] = {}
        for spec in stages:
            ready = max([now] + [done[p] for p in spec.parents if p in done])
            stage = StageNode(
                stage_id=spec.stage_id,
                attempt=0,
                name=f"stage {spec.stage_id}",
                num_tasks=len(spec.tasks),
                parent_stage_ids=list(spec.parents),
                job_ids=[job_id],
                submit_ms=ready,
                status="COMPLETE",
            )
            runs: list[TaskRun] = []
            for index, t in enumerate(spec.tasks):
                slot = min(range(slots), key=free.__getitem__)
                launch = max(free[slot], ready)
                finish = launch + t.run_ms + t.overhead_ms
                free[slot] = finish
                runs.append(
                    TaskRun(
                        task_id=tid,
                        index=index,
                        attempt=0,
                        stage_id=spec.stage_id,
                        stage_attempt=0,
                        executor_id="driver",
                        host="localhost",
                        launch_ms=launch,
                        finish_ms=finish,
                        status="SUCCESS",
                        metrics=TaskMetrics(
                            run_ms=t.run_ms,
                            cpu_ms=t.cpu_ms,
                            has_cpu_time=True,
                            gc_ms=t.gc_ms,
                            shuffle_fetch_wait_ms=t.fetch_wait_ms,
                            shuffle_write_ms=t.shuffle_write_ms,
                            peak_execution_memory=t.peak_memory,
                            memory_spill_bytes=t.memory_spill,
                            disk_spill_bytes=t.disk_spill,
                            shuffle_remote_read_bytes=t.remote_read,
                            shuffle_read_bytes=t.remote_read,
                            input_bytes=t.input_bytes,
                            shuffle_write_bytes=t.shuffle_write,
                        ),
                    )
                )
                tid += 1
            pending.append((stage, runs))
            end = max([ready] + [t.finish_ms or ready for t in runs])
            stage.complete_ms = end
            done[spec.stage_id] = end
            profile.stages[stage.key] = stage
            profile.stage_graph.add_node(spec.stage_id)
            for p in spec.parents:
                profile.stage_graph.add_edge(p, spec.stage_id)
            job.stage_ids.append(spec.stage_id)
        job.complete_ms = max([now] + list(done.values()))
        profile.jobs[job_id] = job
        now = job.complete_ms
    profile.end_ms = now
    # One table for all tasks, each stage a row range of it, as the log reader builds it.
    columns = TaskColumns.from_runs([t for _, runs in pending for t in runs])
    offset = 0
    for stage, runs in pending:
        stage.table = TaskTable(columns, offset, offset + len(runs))
        offset += len(runs)
    return profile
