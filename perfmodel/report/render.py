"""Terminal rendering of a `Diagnosis` with rich tables."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table

from perfmodel.dag.decomposition import COMPONENTS
from perfmodel.report.diagnosis import Diagnosis, StageDiagnosis, short_function, short_name

MAX_STAGE_ROWS = 25


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
    status = "complete" if d.complete else "[yellow]did not finish in this log[/]"
    console.print(
        f"[bold]{d.app_name or d.app_id}[/] ({d.app_id}"
        + (f", attempt {d.attempt}" if d.attempt else "")
        + f") · Spark {d.spark_version} · {d.duration_s:.1f} s · {status}"
    )
    ex = d.executors
    slots = f"{ex.total_slots} slots" if ex.total_slots else "slots unknown"
    util = f", slots busy {d.slot_utilisation:.0%}" if d.slot_utilisation is not None else ""
    console.print(
        f"{d.jobs} jobs ({d.failed_jobs} failed) · {d.stages_completed} stages completed"
        f" ({d.stages_failed} failed, {d.stages_skipped} skipped) · {d.tasks} tasks"
        f" ({d.failed_tasks} not successful) · {d.sql_executions} SQL executions"
    )
    alive = (
        f" ({ex.max_alive} at most at once)"
        if ex.max_alive is not None and ex.max_alive != ex.count
        else ""
    )
    console.print(
        f"master {ex.master or '?'} · {ex.count} executor(s){alive} × {ex.cores or '?'} cores"
        f" on {ex.hosts or '?'} host(s) · {slots}{util}"
        + (" · dynamic allocation" if ex.dynamic_allocation else "")
    )
    console.print()
    _overall(d, console)
    _stages(d, console, all_stages)
    _top_functions(d, console)
    _code_vectors(d, console)
    console.print("[bold]Findings[/]")
    for line in d.findings:
        console.print(f" • {line}")
    if d.advice:
        console.print()
        trust = (
            f" (the model replays the observed run within {abs(d.model_error):.0%})"
            if d.model_error is not None
            else ""
        )
        console.print(f"[bold]Advice[/] — what-if replay{trust}")
        if d.bottleneck:
            console.print(f" • Bottleneck overall: [bold]{d.bottleneck}[/].")
        for item in d.advice:
            text = item["text"]
            console.print(f" • {text[:1].upper()}{text[1:]}")
    if d.warnings:
        console.print()
        console.print("[bold yellow]Warnings[/]")
        for w in d.warnings:
            console.print(f" • {w}")
    if d.problems:
        console.print()
        console.print(f"[bold red]Problems reading the log[/] ({len(d.problems)})")
        for pr in d.problems[:20]:
            where = f"{pr['file']}:{pr['line']}" if pr["line"] is not None else pr["file"]
            console.print(f" • {where}: {pr['message']}")
        if len(d.problems) > 20:
            console.print(f"   … and {len(d.problems) - 20} more (see --json)")


def _overall(d: Diagnosis, console: Console) -> None:
    table = Table(
        title="Where the task time went (measured by Spark's task metrics)", box=box.SIMPLE_HEAD
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
            title=f"Stage {s.stage_id}: top functions by self time (stack samples)",
            box=box.SIMPLE_HEAD,
            show_edge=False,
        )
        table.add_column("function", no_wrap=True, max_width=90)
        table.add_column("self", justify="right")
        table.add_column("share", justify="right")
        for f in s.top_functions:
            table.add_row(
                short_function(f["function"]),
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
            s.code_bottleneck or "-",
            s.dominant or "-",
        )
    console.print(table)
    for s in rows:
        for text in s.disagreements:
            console.print(f" [yellow]•[/] {text}")
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
            short_name(s.name or "-") + status,
            f"{s.duration_s:.1f}s",
            tasks,
            *(_pct(s.shares[c]) for c in COMPONENTS),
            f"{s.skew:.1f}×" if s.skew is not None else "-",
            f"{_bytes(s.shuffle_read_bytes)}/{_bytes(s.shuffle_write_bytes)}",
        )
    console.print(table)
    if hidden:
        console.print(f"  … {hidden} shorter stage(s) not shown (--all-stages shows them)")
    console.print()
