"""The text form of a `Diagnosis`: rich tables, as `perfmodel diagnose` prints them.

Everything taken from a log (names, messages, paths) is data: it reaches rich only as
`rich.text.Text` (never parsed as markup, never run through the highlighter, whose regexes
took minutes on a megabyte-long application name) and is cut to a display length first.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from perfmodel.analysis.diagnosis import Diagnosis, StageDiagnosis, short_function, short_name
from perfmodel.dag.decomposition import COMPONENTS
from perfmodel.profile.quality import DAMAGE_KINDS

MAX_STAGE_ROWS = 25
MAX_NAME_CHARS = 120
"""Longest application name, id or version shown."""
MAX_LINE_CHARS = 600
"""Longest finding, warning or problem message shown (the full text is in --json)."""
MAX_PROBLEMS_SHOWN = 20

Part = str | tuple[str, str]
"""A piece of a line: plain text (data), or ``(text, style)`` for perfmodel's own words."""


def clip(text: object, limit: int = MAX_LINE_CHARS) -> str:
    """``text`` as a string of at most ``limit`` characters, the cut marked."""
    s = str(text)
    if len(s) <= limit:
        return s
    return f"{s[: limit - 1]}… ({len(s):,} characters)"


def line(*parts: Part) -> Text:
    """One line of output from plain data and styled words; nothing in it is markup."""
    return Text.assemble(*parts, no_wrap=False)


def _say(console: Console, *parts: Part) -> None:
    console.print(line(*parts), highlight=False)


def _bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "K", "M", "G", "T"):
        if value < 1024 or unit == "T":
            return f"{value:.0f}{unit}" if unit == "B" else f"{value:.1f}{unit}"
        value /= 1024
    return str(n)


def _pct(x: float) -> str:
    return f"{x:.0%}" if x >= 0.005 else "·"


def render_diagnosis(d: Diagnosis, console: Console, *, all_stages: bool = False) -> None:
    """The whole diagnosis: headline, time split, stages, functions, findings, advice."""
    quality = _quality(d)
    headline = quality.get("headline") if quality and quality.get("affects_answer") else None
    if headline:
        _say(console, ("warning: ", "bold red"), clip(headline))
    status: Part = "complete" if d.complete else ("did not finish in this log", "yellow")
    _say(
        console,
        (clip(d.app_name or d.app_id, MAX_NAME_CHARS), "bold"),
        f" ({clip(d.app_id, MAX_NAME_CHARS)}"
        + (f", attempt {clip(d.attempt, MAX_NAME_CHARS)}" if d.attempt else "")
        + f") · {d.framework} {clip(d.spark_version, MAX_NAME_CHARS)} · {d.duration_s:.1f} s · ",
        status,
    )
    ex = d.executors
    slots = f"{ex.total_slots} slots" if ex.total_slots else "slots unknown"
    util = f", slots busy {d.slot_utilisation:.0%}" if d.slot_utilisation is not None else ""
    _say(
        console,
        f"{d.jobs} jobs ({d.failed_jobs} failed) · {d.stages_completed} stages completed"
        f" ({d.stages_failed} failed, {d.stages_skipped} skipped) · {d.tasks} tasks"
        f" ({d.failed_tasks} not successful) · {d.sql_executions} SQL executions",
    )
    alive = (
        f" ({ex.max_alive} at most at once)"
        if ex.max_alive is not None and ex.max_alive != ex.count
        else ""
    )
    _say(
        console,
        f"master {clip(ex.master or '?', MAX_NAME_CHARS)} · {ex.count} executor(s){alive} × "
        f"{ex.cores or '?'} cores on {ex.hosts or '?'} host(s) · {slots}{util}"
        + (" · dynamic allocation" if ex.dynamic_allocation else ""),
    )
    console.print()
    _overall(d, console)
    _stages(d, console, all_stages)
    _top_functions(d, console)
    _code_vectors(d, console)
    _say(console, ("Findings", "bold"))
    for finding in d.findings:
        _say(console, f" • {clip(finding)}")
    if d.alerts:
        console.print()
        _say(console, ("Alerts", "bold"), " — each with its knob and the runtime predicted with it")
        for alert in d.alerts:
            _say(
                console,
                " • ",
                (clip(alert["kind"], MAX_NAME_CHARS), "bold"),
                f" {clip(alert['where'])}",
            )
            _say(console, f"   {clip(alert['evidence'])}")
            _say(
                console, f"   knob: {clip(alert['knob'])} · suggested: {clip(alert['suggestion'])}"
            )
            if alert.get("shared"):
                _say(console, f"   {clip(alert['shared'])}")
            _say(console, f"   {clip(_alert_outcome(alert))}")
    if d.advice:
        console.print()
        trust = (
            f" (the model replays the observed run within {abs(d.model_error):.0%})"
            if d.model_error is not None
            else ""
        )
        _say(console, ("Advice", "bold"), f" — what-if replay{trust}")
        if d.bottleneck:
            _say(
                console,
                " • Bottleneck overall: ",
                (clip(d.bottleneck, MAX_NAME_CHARS), "bold"),
                ".",
            )
        for item in d.advice:
            text = clip(item["text"])
            _say(console, f" • {text[:1].upper()}{text[1:]}")
            if item.get("basis"):
                _say(console, f"   of which: {clip(item['basis'])}")
    if d.warnings:
        console.print()
        _say(console, ("Warnings", "bold yellow"))
        for w in d.warnings:
            _say(console, f" • {clip(w)}")
    if quality and quality.get("damaged"):
        render_data_quality(quality, console)
    if d.problems:
        console.print()
        _say(console, ("Problems reading the log", "bold red"), f" ({len(d.problems)})")
        for pr in d.problems[:MAX_PROBLEMS_SHOWN]:
            where = f"{pr['file']}:{pr['line']}" if pr["line"] is not None else pr["file"]
            _say(console, f" • {clip(where, MAX_NAME_CHARS * 2)}: {clip(pr['message'])}")
        if len(d.problems) > MAX_PROBLEMS_SHOWN:
            _say(console, f"   … and {len(d.problems) - MAX_PROBLEMS_SHOWN} more (see --json)")


def _alert_outcome(alert: dict[str, Any]) -> str:
    """The alert's predicted runtime with its interval, or why there is none."""
    predicted, base = alert.get("predicted_s"), alert.get("baseline_s")
    if predicted is None or base is None:
        return f"not predicted: {alert.get('not_predicted') or 'no setting in control'}"
    low, high = alert.get("predicted_low_s"), alert.get("predicted_high_s")
    band = f" (80%: {low:.1f}–{high:.1f} s)" if low is not None and high is not None else ""
    change = f"{predicted / base - 1:+.0%}" if base > 0 else "no reference"
    return (
        f"predicted {predicted:.1f} s{band} against {base:.1f} s replaying the run as it was "
        f"({change})"
    )


def _quality(d: Diagnosis) -> dict[str, Any] | None:
    return d.data_quality or None


def render_data_quality(quality: dict[str, Any], console: Console) -> None:
    """The data-quality section: each kind of damage met, how often, and where first."""
    console.print()
    style = "bold red" if quality.get("affects_answer") else "bold yellow"
    _say(console, ("Data quality", style), " (damage met while reading the log)")
    examples = quality.get("examples") or {}
    for kind, n in (quality.get("counts") or {}).items():
        if not n:
            continue
        what = DAMAGE_KINDS.get(kind, kind.replace("_", " "))
        seen = examples.get(kind) or []
        where = f"; first at {', '.join(clip(w, MAX_NAME_CHARS) for w in seen)}" if seen else ""
        _say(console, f" • {n:,} {what}{where}")


def _overall(d: Diagnosis, console: Console) -> None:
    table = Table(
        title=f"Where the task time went (measured by {d.framework}'s task metrics)",
        box=box.SIMPLE_HEAD,
    )
    for name in COMPONENTS:
        table.add_column(name, justify="right")
    table.add_row(*[f"{d.decomposition[n]:.1f} s" for n in COMPONENTS])
    table.add_row(*[_pct(d.shares[n]) for n in COMPONENTS])
    console.print(table)


def _top_functions(d: Diagnosis, console: Console) -> None:
    """Where sampled stacks spent their time, per important stage (bundles only)."""
    shown = [s for s in d.stages if s.top_functions and s.important]
    if not shown:
        return
    for s in shown:
        table = Table(
            title=Text(f"Stage {s.stage_id}: top functions by self time (stack samples)"),
            box=box.SIMPLE_HEAD,
            show_edge=False,
        )
        table.add_column("function", no_wrap=True, max_width=90)
        table.add_column("self", justify="right")
        table.add_column("share", justify="right")
        for f in s.top_functions:
            table.add_row(
                Text(short_function(f["function"])),
                f"{f['self_ms'] / 1000:.2f}s",
                f"{f['self_share']:.0%}",
            )
        console.print(table)
    console.print()


def _code_vectors(d: Diagnosis, console: Console) -> None:
    """Code-inferred resource vectors beside the measured split (bundles only)."""
    rows = [s for s in d.stages if s.code_vector]
    if not rows:
        return
    classes = sorted({c for s in rows for c in s.code_vector})
    table = Table(
        title="Resource vectors inferred from the code each stage ran (stack samples + models)",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    table.add_column("stage", justify="right")
    for c in classes:
        table.add_column(c, justify="right")
    table.add_column("code says")
    table.add_column("metrics say")
    for s in sorted(rows, key=lambda s: s.duration_s, reverse=True)[:MAX_STAGE_ROWS]:
        table.add_row(
            f"{'★' if s.important else ''}{s.stage_id}",
            *(_pct(s.code_vector.get(c, 0.0)) for c in classes),
            Text(clip(s.code_bottleneck or "-", MAX_NAME_CHARS)),
            Text(clip(s.dominant or "-", MAX_NAME_CHARS)),
        )
    console.print(table)
    for s in rows:
        for text in s.disagreements:
            _say(console, (" •", "yellow"), f" {clip(text)}")
    console.print()


def _stages(d: Diagnosis, console: Console, all_stages: bool) -> None:
    rows: list[StageDiagnosis] = sorted(d.stages, key=lambda s: s.duration_s, reverse=True)
    rows = [s for s in rows if s.status != "SKIPPED"]
    hidden = 0
    if not all_stages and len(rows) > MAX_STAGE_ROWS:
        hidden = len(rows) - MAX_STAGE_ROWS
        rows = rows[:MAX_STAGE_ROWS]
    table = Table(
        title="Stages, longest first (★ important; % of the stage's task time)",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
        collapse_padding=True,
    )
    widths = {
        "stage": 5,
        "name": 20,
        "wall": 6,
        "tasks": 5,
        "sched": 5,
        "unattr": 6,
        "skew": 5,
        "shuffle r/w": 11,
    }
    for col in (
        "stage",
        "name",
        "wall",
        "tasks",
        "cpu",
        "gc",
        "net",
        "disk",
        "sched",
        "unattr",
        "skew",
        "shuffle r/w",
    ):
        table.add_column(
            col,
            justify="left" if col == "name" else "right",
            no_wrap=True,
            min_width=widths.get(col, 4),
            max_width=30 if col == "name" else None,
        )
    for s in rows:
        mark = "★" if s.important else ""
        attempt = f".{s.attempt}" if s.attempt else ""
        status = "" if s.status == "COMPLETE" else f" [{s.status.lower()}]"
        tasks = f"{s.tasks_run}" + (f" ({s.failed_tasks}✗)" if s.failed_tasks else "")
        table.add_row(
            f"{mark}{s.stage_id}{attempt}",
            Text(short_name(s.name or "-") + status),
            f"{s.duration_s:.1f}s",
            tasks,
            *(_pct(s.shares[c]) for c in COMPONENTS),
            f"{s.skew:.1f}×" if s.skew is not None else "-",
            f"{_bytes(s.shuffle_read_bytes)}/{_bytes(s.shuffle_write_bytes)}",
        )
    console.print(table)
    if hidden:
        _say(console, f"  … {hidden} shorter stage(s) not shown (--all-stages shows them)")
    console.print()
