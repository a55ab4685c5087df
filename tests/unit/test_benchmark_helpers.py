"""The overhead benchmark's statistics, option parsing and CPU placement (the runs themselves
are not tested: they take minutes and measure, they do not check)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from types import ModuleType

import pytest


def test_variant_words_split_into_options_and_environment(bench: ModuleType) -> None:
    name, (options, env) = bench.variant_options(
        "full25=JAVA_HOME=/usr/lib/jvm/x --no-pyspy --native-interval-ms=20"
    )
    assert name == "full25"
    assert options == ["--no-pyspy", "--native-interval-ms=20"]
    assert env == {"JAVA_HOME": "/usr/lib/jvm/x"}
    assert bench.variant_options("plain") == ("plain", ([], {}))


def test_rotation_visits_every_variant_in_every_round(bench: ModuleType) -> None:
    names = ["plain", "a", "b"]
    orders = [bench.rotation(names, i) for i in range(6)]
    assert all(sorted(order) == sorted(names) for order in orders)
    assert len({tuple(order) for order in orders}) > 1
    # Each variant runs first in some round, so no variant always follows the same one.
    assert {order[0] for order in orders} == set(names)


def test_median_interval_is_order_statistics(bench: ModuleType) -> None:
    assert bench.median_interval([0.01] * 5) is None  # too few for 95%
    values = [float(v) for v in range(1, 25)]  # 24 pairs, as in docs/recording-overhead.md
    low, high = bench.median_interval(values)
    assert (low, high) == (7.0, 18.0)  # k = 7: P(Bin(24, 1/2) < 7) = 0.0113 <= 0.025


def test_pool_reads_saved_outputs_pair_by_pair_and_pools_them(
    bench: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each file's pairs, then all together: one ratio per "run N:" line, recorded over plain."""
    lines = {"a.txt": [(10.0, 11.0), (10.0, 9.0), (20.0, 21.0)], "b.txt": [(10.0, 10.5)] * 4}
    paths = []
    for name, pairs in lines.items():
        text = "job: ...\n" + "".join(
            f"run {i + 1}: plain app {p:.2f} s, plain command {p + 5:.2f} s, app {r:.2f} s, "
            f"command {r + 5:.2f} s, total {r + 6:.2f} s, samplers' CPU 0.60 s\n"
            for i, (p, r) in enumerate(pairs)
        )
        (tmp_path / name).write_text(text + "overhead, application ... +5.0%\n")
        paths.append(str(tmp_path / name))
    bench.pool(paths)
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out] == ["a.txt", "b.txt", "all"]
    assert "3 pairs  median +5.0%" in out[0] and "CI" not in out[0]  # too few for an interval
    assert "4 pairs  median +5.0%" in out[1]
    assert "7 pairs  median +5.0%" in out[2] and "95% CI -10.0% .. +10.0%" in out[2]

    (tmp_path / "empty.txt").write_text("cores: 2\n")
    with pytest.raises(SystemExit, match="holds no pair of runs"):
        bench.pool([str(tmp_path / "empty.txt")])
    with pytest.raises(SystemExit, match="cannot read"):
        bench.pool([str(tmp_path / "missing.txt")])


def test_part_variants_reject_unknown_parts_and_plain_options(bench: ModuleType) -> None:
    def args(**given: object) -> argparse.Namespace:
        return argparse.Namespace(**({"only": "", "variant": [], "plain_variant": []} | given))

    plains, variants = bench.part_variants(
        args(only="full", variant=["v=X=1 --no-jfr"], plain_variant=["p=X=1"])
    )
    assert plains == {"plain": {}, "p": {"X": "1"}}
    assert variants == {"full": ([], {}), "v": (["--no-jfr"], {"X": "1"})}
    with pytest.raises(SystemExit, match="unknown part"):
        bench.part_variants(args(only="fulll"))
    with pytest.raises(SystemExit, match="only VAR=value"):
        bench.part_variants(args(plain_variant=["p=--no-jfr"]))


def test_cpu_table_shows_each_variants_difference_from_plain(
    bench: ModuleType, job_cpu: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    zero = dict.fromkeys(job_cpu.GROUPS, 0.0)
    cpu = {
        "plain": [{**zero, "jit": 8.0}, {**zero, "jit": 10.0}, {**zero, "jit": 9.0}],
        "full": [{**zero, "jit": 9.5, "recording": 0.2}, {**zero, "jit": 9.0, "recording": 0.3}],
    }
    bench.print_cpu(cpu, "in the window")
    out = capsys.readouterr().out
    assert out.startswith("CPU seconds of the job's processes in the window, median:")
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[1:]}
    assert rows["jit"] == ["9.00", "9.25", "(+0.25)"]
    assert rows["recording"] == ["0.00", "0.25", "(+0.25)"]
    assert rows["all"] == ["9.00", "9.50", "(+0.50)"]


def test_spare_core_confines_jobs_and_samplers_to_separate_cpus(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = ["python", "job.py"]
    default = bench.Cores.split(False)
    assert default.job_command(job) == job and default.record_command(["perfmodel"]) == [
        "perfmodel"
    ]
    assert default.watcher().recording_cpus is None
    monkeypatch.setattr(bench.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    cores = bench.Cores.split(True)
    assert cores.job_command(job) == ["taskset", "-c", "0,1,2", "python", "job.py"]
    assert cores.record_command(["perfmodel", "record"]) == [
        "taskset",
        "-c",
        "3",
        "perfmodel",
        "record",
    ]
    assert cores.watcher().recording_cpus == {3}
    monkeypatch.setattr(bench.os, "sched_getaffinity", lambda pid: {5})
    with pytest.raises(SystemExit, match="at least 2"):
        bench.Cores.split(True)


def test_record_command_puts_record_and_job_on_their_cores(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(bench.os, "sched_getaffinity", lambda pid: {0, 1})
    args = argparse.Namespace(interval_ms=20, record_option=["--no-pyspy"])
    cmd, jfr = bench.record_command(args, tmp_path, ["--x"], bench.Cores.split(True), ["job"])
    assert cmd[:3] == ["taskset", "-c", "1"] and Path(cmd[3]).name == "perfmodel"
    assert cmd[4:] == ["record", "--out", str(tmp_path), "--interval-ms", "20", "--no-pyspy"] + [
        "--x",
        "--",
        "taskset",
        "-c",
        "0",
        "job",
    ]
    assert jfr
    _, jfr = bench.record_command(args, tmp_path, ["--no-jfr"], bench.Cores(), ["job"])
    assert not jfr


def test_a_spare_core_run_says_when_no_jfr_thread_was_moved(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    cores = bench.Cores(job=[0], samplers=[1])
    seconds, watcher = bench.run_watched(["true"], dict(os.environ), cores, jfr=True)
    assert seconds > 0 and watcher is not None and not watcher.moved
    assert "no JFR thread was moved" in capsys.readouterr().err
    # Plain runs have nothing to move, and without a spare core nothing is watched.
    assert bench.run_watched(["true"], dict(os.environ), cores)[1] is not None
    assert "moved" not in capsys.readouterr().err
    assert bench.run_watched(["true"], dict(os.environ), bench.Cores())[1] is None


def test_spare_core_variants_are_compared_with_plain_runs_on_the_same_cores(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    apps = {"plain": [10.0], "full": [10.5], "plain:spare": [20.0], "full:spare": [20.2]}
    assert bench.plain_of("full:spare", apps) == "plain:spare"
    assert bench.plain_of("full", apps) == "plain"
    assert bench.plain_of("full:spare", {"plain": [1.0]}) == "plain"
    bench.print_round(0, apps)
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert "+5.0%" in rows["full"] and "+1.0%" in rows["full:spare"]
    assert "+0.0%" in rows["plain:spare"]


def test_both_jobs_of_the_overhead_benchmark_exist(bench: ModuleType) -> None:
    assert bench.JOBS["mixed"] == bench.JOB
    assert all(path.is_file() for path in bench.JOBS.values()), bench.JOBS
