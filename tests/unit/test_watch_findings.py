"""The findings `perfmodel watch` reports per completed stage (`perfmodel.analysis.watch`),
judged from the figures the Spark front end gathers (`perfmodel.spark.live.CompletedStage`):
each rule fires on its own condition and stays quiet just outside it."""

from __future__ import annotations

from array import array

import pytest

from perfmodel.analysis.watch import stage_report
from perfmodel.spark.live import CompletedStage


def stage(
    task_s: list[float] | None = None,
    *,
    duration_s: float | None = 1.0,
    failed: int = 0,
    failure_reason: str | None = None,
    spilled_disk: int = 0,
    spilled_memory: int = 0,
    slots: int | None = None,
    busy_s: float | None = None,
) -> CompletedStage:
    times = array("d", task_s if task_s is not None else [0.5, 0.5])
    return CompletedStage(
        stage_id=4,
        attempt=0,
        name="reduceByKey at job.py:34",
        failure_reason=failure_reason,
        duration_s=duration_s,
        task_s=times,
        failed_tasks=failed,
        spilled_disk=spilled_disk,
        spilled_memory=spilled_memory,
        busy_s=sum(times) if busy_s is None else busy_s,
        slots=slots,
    )


def kinds(s: CompletedStage, earlier: list[float] | None = None) -> list[str]:
    return [f.kind for f in stage_report(s, earlier or []).findings]


def test_a_plain_stage_has_no_findings() -> None:
    report = stage_report(stage(), [])
    assert (report.status, report.tasks, report.findings) == ("COMPLETE", 2, [])


@pytest.mark.parametrize(
    ("task_s", "skewed"),
    [
        ([0.2, 0.2, 0.2, 1.7], True),  # 8.5× the median, over 1 s
        ([0.4, 0.4, 0.4, 1.19], False),  # under 3× the median
        ([0.1, 0.1, 0.1, 0.9], False),  # 9×, but the longest task is under 1 s
        ([3.0], False),  # one task: nothing to compare with
    ],
)
def test_skew_follows_the_diagnosis_rule(task_s: list[float], skewed: bool) -> None:
    assert ("skew" in kinds(stage(task_s))) is skewed


def test_skew_text_names_the_longest_task_and_the_median() -> None:
    (finding,) = stage_report(stage([0.2, 0.2, 0.2, 1.7]), []).findings
    assert finding.text == "longest task 1.7 s, 8.5× the median (0.20 s)"


def test_spill_is_reported_with_its_sizes() -> None:
    (finding,) = stage_report(stage(spilled_disk=3 << 20, spilled_memory=12 << 20), []).findings
    assert finding.kind == "spill"
    assert finding.text == "spilled 3.0 MiB to disk (12.0 MiB in memory before serialisation)"


@pytest.mark.parametrize(
    ("duration_s", "slots", "busy_s", "idle"),
    [
        (10.0, 8, 10.0, True),  # 12.5% of 8 slots
        (10.0, 2, 10.0, False),  # 50%: the threshold is not idle
        (1.5, 8, 1.0, False),  # too short a stage to judge
        (10.0, None, 1.0, False),  # slots unknown
    ],
)
def test_idle_cores(duration_s: float, slots: int | None, busy_s: float, idle: bool) -> None:
    s = stage(duration_s=duration_s, slots=slots, busy_s=busy_s)
    assert ("idle_cores" in kinds(s)) is idle


@pytest.mark.parametrize(
    ("duration_s", "earlier", "slow"),
    [
        (6.0, [1.0, 1.0, 2.0], True),  # 6× the median, over 5 s
        (6.0, [1.0, 1.0], False),  # too few stages before it
        (4.0, [0.5, 0.5, 0.5], False),  # under 5 s
        (6.0, [2.5, 2.5, 2.5], False),  # 2.4× the median
    ],
)
def test_a_slow_stage_is_judged_against_the_stages_before_it(
    duration_s: float, earlier: list[float], slow: bool
) -> None:
    assert ("slow_stage" in kinds(stage(duration_s=duration_s), earlier)) is slow


def test_failed_tasks_and_a_failed_stage() -> None:
    report = stage_report(stage(failed=2, failure_reason="Job aborted\n\tat a.b.C"), [])
    assert report.status == "FAILED" and report.tasks == 4 and report.failed_tasks == 2
    (finding,) = report.findings
    assert finding.kind == "failed_tasks"
    assert finding.text == "2 task attempt(s) failed; stage failed: Job aborted"


def test_no_duration_means_no_judgement_of_time() -> None:
    s = stage(duration_s=None, slots=8, busy_s=0.1)
    assert kinds(s, [0.1, 0.1, 0.1]) == []
