"""Scale benchmark: whole `perfmodel diagnose --json` processes on production-size logs against
a plain decompress + json.loads-per-line loop, alternated, in the same run.

    .venv/bin/python benchmarks/scale.py suite [--logs-dir build/bench] [--runs 3] [--json OUT]
    .venv/bin/python benchmarks/scale.py compare LOG --perfmodel CMD --baseline-perfmodel CMD

The logs (made once, not committed): ``make_large_log.py`` (a: ≥ 1 GB raw, ≥ 200k tasks),
``make_many_jobs_log.py`` (b: ≥ 2,000 jobs, ≥ 5,000 stages) and ``replicate_log.py`` (c: b at
1×, 4× and 16×). Every figure is a fresh process measured from outside (``os.wait4``: wall and
CPU time, peak RSS), start-up and decompression included, as a user runs it. On a shared,
noisy machine only ratios between commands alternated in the same run mean anything, so
``suite`` reports medians and ratios, and ``compare`` (two perfmodel checkouts on one log, e.g.
with and without damage accounting) reports the paired ratio with a 95% confidence interval.

``--perfmodel`` is a command line (``"env PYTHONPATH=/work/wt-x /work/main/.venv/bin/perfmodel"``)
so two checkouts can be compared. Targets (issue 19): diagnose ≥ 3× the loop on a and b; time
per stage flat within 1.5× over the series; peak RSS ≤ 300 MB on a; a 50-point sweep on a
≤ 5× one diagnose. Issue 20: accounting ≤ 3% of diagnose on a.

Two baselines are timed: the issue's ``zstd -dc | json.loads`` pipe (two processes, so two
cores), on which the verdict is given, and the stricter in-process loop (zstandard and
json.loads in one process). A third process, the floor, starts Python with the modules
ingest needs, decompresses and decodes every event with perfmodel's schemas and stops: the
most any diagnose of this design can reach, and what is left for the analysis at 3×.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from replicate_log import read_lines  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PERFMODEL = str(Path(sys.executable).parent / "perfmodel")  # this venv's entry point
SWEEP = ["--sweep", "cores=1,2,3,4,6,8,12,16,24,32", "mem=1g,2g,4g,8g,16g"]  # 10 × 5 = 50
LARGE, MANY = "large-eventlog.zstd", "many-jobs-eventlog.zstd"
SERIES = ("many-jobs-x1.zstd", "many-jobs-x4.zstd", "many-jobs-x16.zstd")


@dataclass
class Measurement:
    """One process, measured from outside: its own and its reaped children's usage."""

    wall_s: float
    cpu_s: float
    max_rss_mb: float
    rc: int
    timed_out: bool


@dataclass
class Survey:
    """What a log holds, counted once by reading it (independent of perfmodel)."""

    raw_bytes: int
    lines: int
    jobs: int
    stages: int
    tasks: int
    sql_executions: int


def measure(argv: list[str], timeout_s: float, expect_json: bool = True) -> Measurement:
    """Runs ``argv`` in its own session; past ``timeout_s`` its whole group is killed.
    ``wait4`` gives this child's own usage (with what it reaped), so peak RSS is this run's,
    not the largest of every child the benchmark ever ran. A run that exits 0 without JSON on
    stdout counts as failed: a wrong ``--perfmodel`` must not time a no-op."""
    env = {**os.environ, "PERFMODEL_STATE_DIR": tempfile.gettempdir() + "/perfmodel-bench-state"}
    # As installed: an installed package has its bytecode cached, so a session that turns
    # caching off must not make every timed run compile perfmodel's sources (~0.2 s CPU).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True
    )
    fired = threading.Event()

    def kill() -> None:
        fired.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout_s, kill)
    timer.start()
    stdout: list[bytes] = []
    reader = threading.Thread(target=lambda: stdout.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    err = proc.stderr.read() if proc.stderr else b""
    reader.join()
    _, status, usage = os.wait4(proc.pid, 0)  # not proc.wait(): that would reap it unseen
    wall = time.perf_counter() - start
    timer.cancel()
    proc.returncode = rc = os.waitstatus_to_exitcode(status)
    if rc == 0 and expect_json:
        try:
            json.loads(b"".join(stdout))
        except ValueError:
            rc, err = -1, b"exit 0 but no JSON on stdout: " + b"".join(stdout)[:200]
    if rc != 0 and not fired.is_set():
        print(f"  ! {' '.join(argv[-3:])} exited {rc}: {err[-400:]!r}", flush=True)
    return Measurement(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        max_rss_mb=usage.ru_maxrss / 1024,
        rc=rc,
        timed_out=fired.is_set(),
    )


def loop_child(path: str) -> None:
    """The baseline: decompress (zstandard, streamed) and json.loads every line, nothing else."""
    lines = raw = 0
    for line in read_lines(Path(path)):
        raw += len(line)
        if line.strip():
            json.loads(line)
            lines += 1
    print(json.dumps({"lines": lines, "raw_bytes": raw}))


def floor_child(path: str, buffer_bytes: int = 4 << 20) -> None:
    """The least any diagnose that reads every event must do: start Python with the modules
    ingest needs, decompress the log (zstandard into one reused buffer, the fastest way
    measured here) and decode every event with perfmodel's own msgspec schemas, which skip
    what the analysis does not read. No profile, no analysis, no output. Its time against
    the loop is the ceiling of the speed-up this design can reach on a log."""
    import msgspec
    import numpy  # noqa: F401  (every analysis step needs it; its import is part of the floor)
    import zstandard

    from perfmodel.spark import events as ev

    decode_block = ev.BLOCK_DECODER.decode_lines
    errors = (msgspec.DecodeError, msgspec.ValidationError)
    events = lines_decoded_one_by_one = 0
    buf = bytearray(buffer_bytes)
    view = memoryview(buf)
    with open(path, "rb") as raw:
        zstd = raw.read(4) == b"\x28\xb5\x2f\xfd"
        raw.seek(0)
        reader = zstandard.ZstdDecompressor().stream_reader(raw) if zstd else raw
        held = 0
        while True:
            if held == len(buf):  # a line longer than the buffer
                view.release()
                buf.extend(bytes(len(buf)))
                view = memoryview(buf)
            got = reader.readinto(view[held:])
            end = held + got
            cut = buf.rfind(b"\n", 0, end) + 1 if got else end
            if cut:
                try:
                    events += len(decode_block(view[:cut]))
                except errors:  # not every line a standard event: one at a time, as ingest
                    for line in bytes(view[:cut]).splitlines():
                        name = ev.event_name(line) if line.strip() else b""
                        decoder = ev.DECODERS.get(name)
                        if decoder is not None:
                            decoder.decode(line)
                        events += decoder is not None or name.decode() in ev.PASSIVE_EVENTS
                        lines_decoded_one_by_one += 1
            if not got:
                break
            buf[: end - cut] = view[cut:end]
            held = end - cut
    print(json.dumps({"events": events, "lines_decoded_one_by_one": lines_decoded_one_by_one}))


def survey(log: Path) -> Survey:
    """Counts events by kind; cached beside the log (keyed by size and mtime) when writable."""
    stat = log.stat()
    cache = log.with_name(log.name + ".survey.json")
    key = [stat.st_size, stat.st_mtime_ns]
    try:
        cached = json.loads(cache.read_text())
        if cached.pop("key") == key:
            return Survey(**cached)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    counts: dict[str, int] = {}
    raw = lines = 0
    for line in read_lines(log):
        raw += len(line)
        if not line.strip():
            continue
        lines += 1
        kind = json.loads(line).get("Event", "")
        counts[kind] = counts.get(kind, 0) + 1
    found = Survey(
        raw_bytes=raw,
        lines=lines,
        jobs=counts.get("SparkListenerJobStart", 0),
        stages=counts.get("SparkListenerStageCompleted", 0),
        tasks=counts.get("SparkListenerTaskEnd", 0),
        sql_executions=counts.get(
            "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart", 0
        ),
    )
    try:
        cache.write_text(json.dumps({**asdict(found), "key": key}))
    except OSError:
        pass
    return found


def loop_argv(log: Path) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "_loop", str(log)]


def floor_argv(log: Path) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "_floor", str(log)]


def pipe_argv(log: Path) -> list[str]:
    """The issue's form of the baseline: the zstd CLI in a pipe (two processes, two cores)."""
    py = "import sys,json\nfor l in sys.stdin.buffer:\n if l.strip(): json.loads(l)"
    cat = "zstd -dc" if _is_zstd(log) else "cat"
    script = f"{cat} {shlex.quote(str(log))} | {shlex.quote(sys.executable)} -c {shlex.quote(py)}"
    return ["sh", "-c", script]


def _is_zstd(log: Path) -> bool:
    with log.open("rb") as fh:
        return fh.read(4) == b"\x28\xb5\x2f\xfd"


def diagnose_argv(perfmodel: str, log: Path) -> list[str]:
    return [*shlex.split(perfmodel), "diagnose", "--json", str(log)]


def sweep_argv(perfmodel: str, log: Path) -> list[str]:
    return [*shlex.split(perfmodel), "predict", str(log), *SWEEP, "--json"]


def alternate(
    commands: dict[str, list[str]], runs: int, timeout_s: float, label: str
) -> dict[str, list[Measurement]]:
    """Runs the commands in turn, ``runs`` rounds, the order reversed every other round so
    neither always runs first after the other (ABBA): drift in machine load hits both."""
    results: dict[str, list[Measurement]] = {name: [] for name in commands}
    names = list(commands)
    for i in range(runs):
        for name in names if i % 2 == 0 else names[::-1]:
            if any(m.timed_out for m in results[name]):
                continue  # one timeout says enough; the next would time out too
            m = measure(commands[name], timeout_s, expect_json=name != "pipe")
            results[name].append(m)
            shown = f"> {timeout_s:g} s (timeout)" if m.timed_out else f"{m.wall_s:7.2f} s"
            print(
                f"  {label} run {i + 1} {name:10s} {shown}  cpu {m.cpu_s:7.2f} s  "
                f"peak RSS {m.max_rss_mb:6.0f} MB",
                flush=True,
            )
    return results


def summary(ms: list[Measurement], raw_bytes: int) -> dict[str, Any]:
    ok = [m for m in ms if m.rc == 0 and not m.timed_out]
    if not ok:
        worst = max((m.wall_s for m in ms), default=math.nan)
        timed_out = any(m.timed_out for m in ms)
        codes = sorted({m.rc for m in ms if not m.timed_out})
        return {
            "ok": False,
            "runs": len(ms),
            "timed_out": timed_out,
            "wall_s_at_least": worst,
            "exit_codes": codes,
        }
    wall = statistics.median(m.wall_s for m in ok)
    return {
        "ok": True,
        "runs": len(ok),
        "wall_s": wall,
        "cpu_s": statistics.median(m.cpu_s for m in ok),
        "max_rss_mb": max(m.max_rss_mb for m in ok),
        "raw_mb_per_s": raw_bytes / 1e6 / wall,
    }


def paired_ratio(a: list[float], b: list[float]) -> dict[str, float]:
    """Geometric mean of a_i / b_i with a 95% t interval on the log ratios (pairs are the
    rounds of one alternation, so load drift cancels within a pair)."""
    logs = [math.log(x / y) for x, y in zip(a, b, strict=False) if x > 0 and y > 0]
    n = len(logs)
    mean = statistics.fmean(logs) if logs else math.nan
    if n < 2:
        return {"n": n, "ratio": math.exp(mean), "ci_low": math.nan, "ci_high": math.nan}
    from scipy.stats import t  # a dependency of scikit-learn, already installed

    half = t.ppf(0.975, n - 1) * statistics.stdev(logs) / math.sqrt(n)
    return {
        "n": n,
        "ratio": math.exp(mean),
        "ci_low": math.exp(mean - half),
        "ci_high": math.exp(mean + half),
    }


def conditions() -> dict[str, object]:
    return {
        "date_utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "load_average": list(os.getloadavg()),
        "cpus": os.cpu_count(),
        "python": sys.executable,
    }


def _fmt(s: dict[str, Any], timeout_s: float) -> str:
    if not s["ok"]:
        if s.get("timed_out"):
            return f"> {timeout_s:g} s (timed out)"
        return f"failed (exit {s.get('exit_codes')})"
    return (
        f"{s['wall_s']:8.2f} s  cpu {s['cpu_s']:8.2f} s  {s['max_rss_mb']:6.0f} MB  "
        f"{s['raw_mb_per_s']:7.1f} MB/s"
    )


def bench_log(args: argparse.Namespace, name: str, log: Path) -> dict[str, object]:
    """Diagnose against the loop on one log: medians, peak RSS, MB/s and the ratio."""
    found = survey(log)
    print(
        f"\n{name}: {log} ({log.stat().st_size / 1e6:.1f} MB on disk, "
        f"{found.raw_bytes / 1e6:.0f} MB raw; {found.jobs} jobs, {found.stages} stages, "
        f"{found.tasks} tasks)",
        flush=True,
    )
    commands = {"loop": loop_argv(log), "diagnose": diagnose_argv(args.perfmodel, log)}
    if not args.no_floor:
        commands["floor"] = floor_argv(log)
    if not args.no_pipe:
        commands["pipe"] = pipe_argv(log)
    ms = alternate(commands, args.runs, args.timeout, name)
    result: dict[str, object] = {
        "log": str(log),
        "survey": asdict(found),
        "conditions": conditions(),
    }
    for kind, runs in ms.items():
        result[kind] = summary(runs, found.raw_bytes)
        result[kind + "_runs"] = [asdict(m) for m in runs]
        print(f"  {kind:9s} {_fmt(result[kind], args.timeout)}")  # type: ignore[arg-type]
    diag, floor = result["diagnose"], result.get("floor")
    for base in ("loop", "pipe"):  # the in-process loop, and the issue's own form of it
        ref = result.get(base)
        if not isinstance(ref, dict) or not ref["ok"]:
            continue
        if diag["ok"]:  # type: ignore[index]
            speed = ref["wall_s"] / diag["wall_s"]  # type: ignore[index]
            cpu = ref["cpu_s"] / diag["cpu_s"]  # type: ignore[index]
            result[f"speedup_vs_{base}"] = speed
            result[f"speedup_vs_{base}_cpu"] = cpu
            print(f"  diagnose vs {base}: {speed:.2f}x wall, {cpu:.2f}x cpu (target >= 3x)")
        if isinstance(floor, dict) and floor["ok"]:
            ceiling = ref["wall_s"] / floor["wall_s"]
            left = ref["wall_s"] / 3 - floor["wall_s"]
            result[f"ceiling_vs_{base}"] = ceiling
            result[f"left_for_analysis_at_3x_{base}_s"] = left
            print(
                f"  floor (start-up + decompress + decode every event, no analysis) vs {base}: "
                f"{ceiling:.2f}x, the most any diagnose of this design can reach; at 3x the "
                f"whole analysis and output would have {left * 1000:.0f} ms"
            )
    return result


def bench_series(args: argparse.Namespace, logs: list[Path]) -> dict[str, object]:
    """Diagnose on the replicated series: time per stage should stay flat."""
    rows = []
    print("\nseries (c): diagnose time per stage", flush=True)
    timed_out_on: str | None = None
    for log in logs:
        found = survey(log)
        if timed_out_on is not None:  # the logs grow: this one would take longer still
            print(f"  {log.name}: not run, {timed_out_on} already took > timeout", flush=True)
            skipped = {"ok": False, "runs": 0, "not_run_after_timeout_on": timed_out_on}
            rows.append(
                {
                    "log": str(log),
                    "survey": asdict(found),
                    "diagnose": skipped,
                    "ms_per_stage": math.nan,
                    "cpu_ms_per_stage": math.nan,
                }
            )
            continue
        ms = alternate(
            {"diagnose": diagnose_argv(args.perfmodel, log)},
            args.series_runs,
            args.series_timeout,
            log.name,
        )["diagnose"]
        s = summary(ms, found.raw_bytes)
        if any(m.timed_out for m in ms) and not args.series_run_all:
            timed_out_on = log.name
        ok = s["ok"] and found.stages
        per_stage = s["wall_s"] / found.stages * 1e3 if ok else math.nan
        cpu_per_stage = s["cpu_s"] / found.stages * 1e3 if ok else math.nan
        rows.append(
            {
                "log": str(log),
                "survey": asdict(found),
                "diagnose": s,
                "ms_per_stage": per_stage,
                "cpu_ms_per_stage": cpu_per_stage,
            }
        )
    base = rows[0]["ms_per_stage"] if rows else math.nan
    print(
        f"  {'log':22s} {'jobs':>7s} {'stages':>7s} {'tasks':>8s} {'raw MB':>7s}  "
        f"{'diagnose':>12s} {'ms/stage':>9s} {'vs 1x':>6s} {'cpu ms/st':>9s}"
    )
    for row in rows:
        sv, s = row["survey"], row["diagnose"]
        wall = f"{s['wall_s']:10.2f} s" if s["ok"] else f"> {args.series_timeout:g} s"
        if s.get("not_run_after_timeout_on"):
            wall = "not run"
        elif not s["ok"] and not s.get("timed_out"):
            wall = "failed"
        row["per_stage_vs_first"] = row["ms_per_stage"] / base if base == base else math.nan
        print(
            f"  {Path(row['log']).name:22s} {sv['jobs']:7d} {sv['stages']:7d} {sv['tasks']:8d} "
            f"{sv['raw_bytes'] / 1e6:7.0f}  {wall:>12s} {row['ms_per_stage']:9.2f} "
            f"{row['per_stage_vs_first']:6.2f} {row['cpu_ms_per_stage']:9.2f}"
        )
    print("  target: ms/stage flat within 1.5x (max/min) across the series")
    return {"rows": rows, "conditions": conditions()}


def bench_sweep(args: argparse.Namespace, log: Path) -> dict[str, object]:
    """A 50-point `predict --sweep` against one diagnose, alternated."""
    found = survey(log)
    print(f"\nsweep: 50-point predict --sweep on {log.name}", flush=True)
    commands = {
        "diagnose": diagnose_argv(args.perfmodel, log),
        "sweep50": sweep_argv(args.perfmodel, log),
    }
    ms = alternate(commands, args.sweep_runs, args.series_timeout, "sweep")
    result: dict[str, object] = {"log": str(log), "argv": SWEEP, "conditions": conditions()}
    for kind, runs in ms.items():
        result[kind] = summary(runs, found.raw_bytes)
        print(f"  {kind:9s} {_fmt(result[kind], args.series_timeout)}")  # type: ignore[arg-type]
    d, s = result["diagnose"], result["sweep50"]
    if d["ok"] and s["ok"]:  # type: ignore[index]
        result["sweep_vs_diagnose"] = s["wall_s"] / d["wall_s"]  # type: ignore[index]
        print(f"  sweep / diagnose: {result['sweep_vs_diagnose']:.2f}x (target <= 5x)")
    return result


def compare(args: argparse.Namespace) -> dict[str, object]:
    """Two perfmodel commands on one log, alternated: the cost of a change (e.g. issue 20's
    damage accounting, ≤ 3%) as a paired ratio with its 95% confidence interval."""
    found = survey(args.log)
    print(f"compare on {args.log} ({found.raw_bytes / 1e6:.0f} MB raw, {found.tasks} tasks)")
    print(f"  A = {args.perfmodel}\n  B = {args.baseline_perfmodel}", flush=True)
    commands = {
        "A": diagnose_argv(args.perfmodel, args.log),
        "B": diagnose_argv(args.baseline_perfmodel, args.log),
    }
    before = conditions()
    ms = alternate(commands, args.runs, args.timeout, "compare")
    result: dict[str, object] = {
        "log": str(args.log),
        "survey": asdict(found),
        "A": args.perfmodel,
        "B": args.baseline_perfmodel,
        "conditions_before": before,
        "conditions_after": conditions(),
        "runs": {k: [asdict(m) for m in v] for k, v in ms.items()},
    }
    pairs = [
        (a, b)
        for a, b in zip(ms["A"], ms["B"], strict=False)
        if a.rc == 0 == b.rc and not (a.timed_out or b.timed_out)
    ]
    for kind in ("wall_s", "cpu_s"):
        r = paired_ratio([getattr(a, kind) for a, _ in pairs], [getattr(b, kind) for _, b in pairs])
        result[kind] = r
        print(
            f"  A/B {kind[:-2]:4s}: {r['ratio']:.4f} "
            f"(95% CI {r['ci_low']:.4f} .. {r['ci_high']:.4f}, {r['n']} pairs; "
            f"{100 * (r['ratio'] - 1):+.1f}%)"
        )
    rss = {k: max((m.max_rss_mb for m in v), default=math.nan) for k, v in ms.items()}
    result["max_rss_mb"] = rss
    print(f"  peak RSS: A {rss['A']:.0f} MB, B {rss['B']:.0f} MB")
    limit = 1 + args.max_overhead
    for kind in ("wall_s", "cpu_s"):
        r = result[kind]
        if r["ci_high"] <= limit:  # type: ignore[index]
            verdict = "PASS (the whole interval is within it)"
        elif r["ci_low"] > limit:  # type: ignore[index]
            verdict = "FAIL (the whole interval is above it)"
        else:
            verdict = "INCONCLUSIVE (the interval straddles it: more --runs)"
        result[f"verdict_{kind}"] = verdict
        print(f"  A costs <= {100 * args.max_overhead:g}% more {kind[:-2]}: {verdict}")
    return result


def suite(args: argparse.Namespace) -> dict[str, object]:
    d = args.logs_dir
    large, many = args.large or d / LARGE, args.many or d / MANY
    series = args.series or [d / name for name in SERIES]
    print(f"perfmodel: {args.perfmodel}\nconditions: {conditions()}", flush=True)
    out: dict[str, object] = {"perfmodel": args.perfmodel, "conditions": conditions()}
    skip = set(args.skip)
    if "a" not in skip:
        out["a"] = bench_log(args, "a (large)", large)
        a = out["a"]["diagnose"]  # type: ignore[index]
        if a["ok"]:
            print(f"  peak RSS on a: {a['max_rss_mb']:.0f} MB (target <= 300 MB)")
    if "b" not in skip:
        out["b"] = bench_log(args, "b (many jobs)", many)
    if "c" not in skip:
        out["c"] = bench_series(args, series)
    if "sweep" not in skip:
        out["sweep"] = bench_sweep(args, large)
    out["targets"] = targets(out)
    return out


def targets(out: dict[str, Any]) -> dict[str, str]:
    """Issue 19's targets, each PASS, FAIL or not measured, with the figure behind it."""
    verdicts: dict[str, str] = {}

    def check(name: str, value: float | None, ok: bool, shown: str) -> None:
        verdicts[name] = "not measured" if value is None else f"{'PASS' if ok else 'FAIL'} {shown}"

    for key in ("a", "b"):
        got = out.get(key, {})
        # The baseline is `zstd -dc | json.loads` (the pipe); the in-process loop is
        # the stricter one. The verdict is on the where it was measured.
        base = "pipe" if got.get("speedup_vs_pipe") else "loop"
        speed = got.get(f"speedup_vs_{base}")
        shown = ", ".join(
            f"{got[f'speedup_vs_{b}']:.2f}x {b} wall ({got[f'speedup_vs_{b}_cpu']:.2f}x cpu)"
            for b in ("pipe", "loop")
            if got.get(f"speedup_vs_{b}")
        )
        check(f"diagnose >= 3x loop on {key}", speed, bool(speed and speed >= 3), shown)
        if got.get("diagnose", {}).get("timed_out"):
            verdicts[f"diagnose >= 3x loop on {key}"] = "FAIL (diagnose timed out)"
        ceilings = [
            f"{got[f'ceiling_vs_{b}']:.2f}x {b} "
            f"({got[f'left_for_analysis_at_3x_{b}_s'] * 1000:.0f} ms for the analysis at 3x)"
            for b in ("pipe", "loop")
            if got.get(f"ceiling_vs_{b}")
        ]
        if ceilings:
            verdicts[f"  (ceiling on {key}: floor)"] = ", ".join(ceilings)
    rows = out.get("c", {}).get("rows", [])
    per_stage = [r["ms_per_stage"] for r in rows]
    measured = rows and all(v == v for v in per_stage)  # NaN where a log timed out
    worst = max(per_stage) / min(per_stage) if measured else None  # flat either way
    cpu = [r["cpu_ms_per_stage"] for r in rows]
    cpu_spread = max(cpu) / min(cpu) if measured else 0
    shown = f"max/min {worst or 0:.2f}x wall, {cpu_spread:.2f}x cpu"
    check("ms/stage within 1.5x over c", worst, bool(worst and worst <= 1.5), shown)
    if rows and not measured:
        verdicts["ms/stage within 1.5x over c"] = "FAIL (a log timed out or failed)"
    rss = out.get("a", {}).get("diagnose", {}).get("max_rss_mb")
    check("peak RSS <= 300 MB on a", rss, bool(rss and rss <= 300), f"{rss or 0:.0f} MB")
    sweep = out.get("sweep", {}).get("sweep_vs_diagnose")
    check("50-point sweep <= 5x diagnose", sweep, bool(sweep and sweep <= 5), f"{sweep or 0:.2f}x")
    print("\ntargets:")
    for name, verdict in verdicts.items():
        print(f"  {name:32s} {verdict}")
    return verdicts


def _strict(node: object) -> object:
    """NaN (a figure that could not be measured) as null: the file is strict JSON."""
    if isinstance(node, float) and not math.isfinite(node):
        return None
    if isinstance(node, dict):
        return {k: _strict(v) for k, v in node.items()}
    if isinstance(node, list | tuple):
        return [_strict(v) for v in node]
    return node


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "_loop":
        loop_child(sys.argv[2])
        return
    if len(sys.argv) == 3 and sys.argv[1] == "_floor":
        floor_child(sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--perfmodel",
        default=DEFAULT_PERFMODEL,
        help='perfmodel command line, e.g. "env PYTHONPATH=/work/wt-x .venv/bin/perfmodel"',
    )
    common.add_argument("--runs", type=int, default=3, help="rounds per alternation")
    common.add_argument("--timeout", type=float, default=600, help="seconds per process")
    common.add_argument("--json", type=Path, help="also write the results here")
    s = sub.add_parser("suite", parents=[common], help="targets of issue 19 on logs a, b, c")
    s.add_argument("--logs-dir", type=Path, default=REPO / "build" / "bench")
    s.add_argument("--large", type=Path, help=f"log a (default LOGS_DIR/{LARGE})")
    s.add_argument("--many", type=Path, help=f"log b (default LOGS_DIR/{MANY})")
    s.add_argument("--series", type=Path, nargs="+", help="logs c, smallest first")
    s.add_argument("--series-runs", type=int, default=1, help="diagnose runs per series log")
    s.add_argument(
        "--series-timeout", type=float, default=600, help="seconds per series or sweep process"
    )
    s.add_argument(
        "--series-run-all",
        action="store_true",
        help="run every log of the series even after a smaller one timed out",
    )
    s.add_argument("--sweep-runs", type=int, default=1, help="sweep/diagnose rounds on log a")
    s.add_argument(
        "--no-pipe",
        action="store_true",
        help="skip `zstd -dc | json.loads` (the issue's baseline; the verdict then uses the loop)",
    )
    s.add_argument(
        "--no-floor",
        action="store_true",
        help="skip the floor process (decompress + decode only: the ceiling of any diagnose)",
    )
    s.add_argument("--skip", nargs="*", default=[], choices=("a", "b", "c", "sweep"))
    c = sub.add_parser("compare", parents=[common], help="two perfmodel commands on one log")
    c.add_argument("log", type=Path, help="the log both commands diagnose (issue 20: log a)")
    c.add_argument("--baseline-perfmodel", required=True, help="command line of B")
    c.add_argument(
        "--max-overhead", type=float, default=0.03, help="allowed A/B - 1 (issue 20: 0.03)"
    )
    c.set_defaults(runs=10)  # pairs: a 3% bound needs a CI narrower than the noise of one run
    args = parser.parse_args()
    result = suite(args) if args.mode == "suite" else compare(args)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(_strict(result), indent=2, default=str, allow_nan=False))
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
