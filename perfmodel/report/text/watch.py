"""The text form of `perfmodel watch`'s stage reports: one line per completed stage
attempt, then one indented line per finding. Plain lines, so a terminal or a log file
shows each as soon as the stage completes."""

from __future__ import annotations

from perfmodel.analysis.watch import StageReport

MAX_STAGE_NAME = 60
"""Characters of a stage's name shown (Spark's names hold the call site, often long)."""


def stage_lines(report: StageReport) -> list[str]:
    """``stage 4 (reduceByKey at job.py:34): 2.2 s, 4 task(s)`` and its findings."""
    took = f"{report.duration_s:.1f} s" if report.duration_s is not None else "?"
    status = "" if report.status == "COMPLETE" else f" {report.status}"
    attempt = f".{report.attempt}" if report.attempt else ""
    name = " ".join(report.name.split())[:MAX_STAGE_NAME]
    lines = [f"stage {report.stage_id}{attempt}{status} ({name}): {took}, {report.tasks} task(s)"]
    lines += [f"  {f.kind}: {f.text}" for f in report.findings]
    return lines
