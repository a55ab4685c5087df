"""The text forms of the run store's records: ``perfmodel runs list|show|compare`` and what
``perfmodel experiment run`` ran. Plain aligned columns, one run or stage per line."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from perfmodel.experiment.runner import RunReport
    from perfmodel.runs.rows import RunRow, Sample, StageRow


def _fmt_bytes(n: float | None) -> str:
    if n is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _fmt_s(x: float | None) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1f}"


def render_runs(rows: Sequence[RunRow]) -> list[str]:
    """One line per run under a header."""
    lines = [
        f"{'id':>5}  {'started':<16} {'experiment':<14} {'config':<24} {'rep':>4} "
        f"{'status':<7} {'app s':>7} {'wall s':>7} {'cpu s':>7} {'peak rss':>10}"
    ]
    for r in rows:
        rep = f"w{r.repetition}" if r.warmup else str(r.repetition)
        lines.append(
            f"{r.id:>5}  {time.strftime('%Y-%m-%d %H:%M', time.localtime(r.started_at)):<16} "
            f"{r.experiment[:14]:<14} {r.config[:24]:<24} {rep:>4} {r.status:<7} "
            f"{_fmt_s(r.app_s):>7} {_fmt_s(r.wall_s):>7} {_fmt_s(r.cpu_s):>7} "
            f"{_fmt_bytes(r.peak_rss_bytes):>10}"
        )
    return lines


def render_run(run: RunRow, samples: Sequence[Sample], stages: Sequence[StageRow]) -> list[str]:
    """One run: configuration, measurements, its resource samples in brief, its stages."""
    lines = [f"run {run.id}: {run.experiment} [{run.config}] — {run.status}"]
    if run.error:
        lines.append(f"  error: {run.error}")
    lines.append(f"  command: {' '.join(run.command)}")
    lines.append(f"  bundle:  {run.bundle_path}")
    lines.append(
        f"  app {_fmt_s(run.app_s)} s · wall {_fmt_s(run.wall_s)} s · cpu {_fmt_s(run.cpu_s)} s"
        f" · peak rss {_fmt_bytes(run.peak_rss_bytes)} · disk read "
        f"{_fmt_bytes(run.read_bytes)} write {_fmt_bytes(run.write_bytes)} · net sent "
        f"{_fmt_bytes(run.net_sent_bytes)} (host) · load {_fmt_s(run.load_avg)}"
    )
    if samples:
        peak_cpu = max(s.cpu_percent for s in samples)
        lines.append(
            f"  {len(samples)} samples over {samples[-1].t_s:.1f} s; CPU peak {peak_cpu:.0f}%, "
            f"mean {sum(s.cpu_percent for s in samples) / len(samples):.0f}%"
        )
    if stages:
        lines.append(
            f"  {'stage':>6} {'tasks':>6} {'dur s':>7} {'task s':>7} {'cpu s':>7} "
            f"{'gc s':>6} {'input':>10} {'shuf wr':>10} {'spill':>10}  name"
        )
        for s in stages:
            lines.append(
                f"  {s.stage_id:>4}.{s.attempt:<1} {s.tasks:>6} {s.duration_s:>7.1f} "
                f"{s.task_s:>7.1f} {s.cpu_s:>7.1f} {s.gc_s:>6.1f} {_fmt_bytes(s.input_bytes):>10} "
                f"{_fmt_bytes(s.shuffle_write_bytes):>10} {_fmt_bytes(s.spill_bytes):>10}  "
                f"{s.name[:40]}"
            )
    return lines


COMPARE_FIELDS: list[tuple[str, Callable[[RunRow], str]]] = [
    ("experiment", lambda r: r.experiment),
    ("config", lambda r: r.config),
    ("status", lambda r: r.status),
    ("app s", lambda r: _fmt_s(r.app_s)),
    ("wall s", lambda r: _fmt_s(r.wall_s)),
    ("cpu s", lambda r: _fmt_s(r.cpu_s)),
    ("peak rss", lambda r: _fmt_bytes(r.peak_rss_bytes)),
    ("disk read", lambda r: _fmt_bytes(r.read_bytes)),
    ("disk write", lambda r: _fmt_bytes(r.write_bytes)),
    ("load avg", lambda r: _fmt_s(r.load_avg)),
]


def render_comparison(
    runs: Sequence[RunRow], stages: Mapping[int, Sequence[StageRow]]
) -> list[str]:
    """Runs in columns: their measurements, then each stage's duration (and tasks)."""
    width = 2 + max(16, *(len(get(r)) for _, get in COMPARE_FIELDS for r in runs))
    lines = [f"{'':<12}" + "".join(f"{'run ' + str(r.id):>{width}}" for r in runs)]
    for label, get in COMPARE_FIELDS:
        lines.append(f"{label:<12}" + "".join(f"{get(r):>{width}}" for r in runs))
    keys = sorted({(s.stage_id, s.attempt) for r in runs for s in stages[r.id]})
    if keys:
        lines.append("stage duration s (tasks)")
        for key in keys:
            cells = []
            for r in runs:
                s = next((s for s in stages[r.id] if (s.stage_id, s.attempt) == key), None)
                cells.append(f"{s.duration_s:.1f} ({s.tasks})" if s else "-")
            name = f"stage {key[0]}" + (f" (attempt {key[1]})" if key[1] else "")
            lines.append(f"{name:<12}" + "".join(f"{c:>{width}}" for c in cells))
    return lines


def render_experiment_runs(name: str, reports: Sequence[RunReport]) -> str:
    """How many of the runs succeeded, and their ids."""
    ok = sum(r.status == "ok" for r in reports)
    ids = [r.run_id for r in reports]
    span = f"{min(ids)}–{max(ids)}" if ids else "none"
    return f"{name}: {ok}/{len(reports)} runs ok; ids {span}"
