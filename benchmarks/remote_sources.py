"""Remote sources: reading a log from a loopback S3 server against local disk, and the CPU
`perfmodel watch` adds to the application it follows (issue 44).

    .venv/bin/python benchmarks/remote_sources.py s3 [--times 16] [--runs 7]
    .venv/bin/python benchmarks/remote_sources.py watch [--rounds 30] [--interval 2] \
        [--baseline TREE] [--fixed-runs 5]

``s3``: makes a bigger real log (``replicate_log.py --times N`` of a real Spark 4 zstd log
from ../shared), uploads it to moto's S3 server on loopback, and times whole processes,
alternated local/S3, ``--runs`` times each: ``perfmodel diagnose --json`` and a read-only
process that streams the decompressed bytes through the sources layer (``iter_decompressed``)
and stops. Prints the medians and the speed ratio local time ÷ S3 time (target ≥ 0.8); for
the read-only process also the streaming after its first decompressed piece (timed inside
the process), which leaves out the start-up (imports, the S3 client, the first request).

``watch``: runs the PySpark job of tests/e2e (``--rounds`` rounds of two stages) and
``perfmodel watch`` on its log at once; the job's CPU is its whole process tree's (sampled
with psutil every 0.2 s, each process's last reading kept), the watcher's from ``wait4``.
The same command on the finished log (median of ``--fixed-runs``) gives the fixed cost
(start-up, final diagnosis), so both the total overhead and the following itself are shown
(target < 2%). Bytecode is cached (as an installed package has it) and warmed by a
one-round job first. ``--baseline TREE`` runs a second watcher, the perfmodel of that
source tree (e.g. ``git archive`` of an older commit), on the same job, to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "eventlogs"
PERFMODEL = str(Path(sys.executable).parent / "perfmodel")
ENV = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench-secret",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}
READ_ONLY = """
import sys, time
from perfmodel.profile.codecs import DEFAULT_MAX_DECOMPRESSED, iter_decompressed
from perfmodel.profile.sources.locate import log_path
log = log_path(sys.argv[1], max_decompressed_bytes=DEFAULT_MAX_DECOMPRESSED)
pieces = iter_decompressed(log)
n = len(next(pieces))
start = time.perf_counter()
n += sum(len(piece) for piece in pieces)
print(n)
print(f"stream_s={time.perf_counter() - start}")
"""


def finish(proc: subprocess.Popen) -> tuple[bytes, float]:
    """Output and CPU seconds of a process, reaped with ``wait4`` (its own usage, whatever
    else this process has running at the time)."""
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{proc.args} failed with status {proc.returncode}")
    return out, usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall and CPU seconds of one whole process, and its output."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out, cpu = finish(proc)
    return time.perf_counter() - start, cpu, out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bench_s3(times: int, runs: int) -> None:
    import pyarrow.fs as pafs

    work = Path(tempfile.mkdtemp(prefix="perfmodel-bench-s3-"))
    src = SHARED / "local-1776286786993.zstd"
    log = work / f"replicated-x{times}.zstd"
    subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "replicate_log.py"),
            str(src),
            "--times",
            str(times),
            "--out",
            str(log),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    port = free_port()
    env = {
        **_measured_env(work / "pycache", None),
        **ENV,
        "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120  # moto starts slowly on a loaded machine
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("moto's S3 server did not start") from None
                time.sleep(0.5)
        fs = pafs.S3FileSystem(
            endpoint_override=f"127.0.0.1:{port}",
            scheme="http",
            region="us-east-1",
            access_key=ENV["AWS_ACCESS_KEY_ID"],
            secret_key=ENV["AWS_SECRET_ACCESS_KEY"],
            allow_bucket_creation=True,
        )
        fs.create_dir("bench")
        with fs.open_output_stream(f"bench/{log.name}") as out:
            out.write(log.read_bytes())
        remote = f"s3://bench/{log.name}"
        print(
            f"log: {log.name}, {log.stat().st_size / 1e6:.1f} MB zstd "
            f"(replicate_log.py --times {times} of {src.name})"
        )
        commands = {
            "diagnose": lambda where: [PERFMODEL, "diagnose", "--json", where],
            "read": lambda where: [sys.executable, "-c", READ_ONLY, where],
        }
        for name, cmd in commands.items():
            local_t: list[float] = []
            s3_t: list[float] = []
            streams: dict[str, list[float]] = {str(log): [], remote: []}
            outputs = set()
            for where in (str(log), remote):  # warm the bytecode cache, untimed
                timed(cmd(where), env)
            for i in range(runs):
                order = [(str(log), local_t), (remote, s3_t)]
                if i % 2:
                    order.reverse()
                for where, into in order:
                    wall, _cpu, out = timed(cmd(where), env)
                    into.append(wall)
                    text, _, stream = out.partition(b"\nstream_s=")
                    if stream:
                        streams[where].append(float(stream))
                    outputs.add(text.replace(remote.encode(), str(log).encode()))
            same = "same output" if len(outputs) == 1 else "OUTPUTS DIFFER"
            lm, sm = statistics.median(local_t), statistics.median(s3_t)
            print(
                f"{name:9s} local {lm:6.2f} s  s3 {sm:6.2f} s  speed ratio local/s3 "
                f"{lm / sm:.2f}  ({runs} alternated runs each, medians; {same})"
            )
            if streams[remote]:
                ls, ss = statistics.median(streams[str(log)]), statistics.median(streams[remote])
                print(
                    f"{'':9s} of which streaming after the first piece: local {ls:.2f} s  s3 "
                    f"{ss:.2f} s  speed ratio {ls / ss:.2f} (the rest is start-up: imports, "
                    "the client, the first request)"
                )
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


def _tree_cpu(root: psutil.Process, seen: dict[int, float]) -> None:
    try:
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return
    for p in procs:
        try:
            t = p.cpu_times()
            seen[p.pid] = t.user + t.system + t.children_user + t.children_system
        except psutil.NoSuchProcess:
            pass


def _measured_env(pycache: Path, tree: Path | None) -> dict[str, str]:
    """The environment of a measured process: bytecode cached in ``pycache``, as an
    installed package has it (pip compiles it at install; a shell with
    PYTHONDONTWRITEBYTECODE would otherwise compile every module at every start), and with
    ``tree`` the perfmodel of that source tree instead of this one."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def bench_watch(rounds: int, interval: float, baseline: Path | None, fixed_runs: int) -> None:
    work = Path(tempfile.mkdtemp(prefix="perfmodel-bench-watch-"))
    events = work / "events"
    events.mkdir()
    pycache = work / "pycache"
    job_env = {**_measured_env(pycache, None), "SPARK_LOCAL_IP": "127.0.0.1"}
    trees: dict[str, Path | None] = {"this": None}
    if baseline is not None:
        trees["baseline"] = baseline

    def job_cmd(log_dir: Path, n: int) -> list[str]:
        script = REPO / "tests" / "e2e" / "spark_job_for_watch.py"
        return [sys.executable, str(script), str(log_dir), "single", str(n)]

    def watch_cmd(where: Path) -> list[str]:
        return [PERFMODEL, "watch", str(where), "--json", "--interval", str(interval)]

    try:
        # Warm the bytecode caches: a one-round job, and each watcher on its log.
        warm = work / "warm"
        warm.mkdir()
        subprocess.run(job_cmd(warm, 1), env=job_env, check=True, capture_output=True)
        for tree in trees.values():
            timed(watch_cmd(warm), _measured_env(pycache, tree))
        # Every watcher follows the same job, started in turn (order rotated per run).
        watchers = {
            name: subprocess.Popen(
                watch_cmd(events),
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=_measured_env(pycache, tree),
            )
            for name, tree in trees.items()
        }
        job = psutil.Popen(
            job_cmd(events, rounds),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=job_env,
        )
        seen: dict[int, float] = {}
        start = time.perf_counter()
        while job.poll() is None:
            _tree_cpu(job, seen)
            time.sleep(0.2)
        job_wall = time.perf_counter() - start
        job_cpu = sum(seen.values())
        print(f"job: {rounds} rounds, {job_wall:.1f} s wall, {job_cpu:.1f} s CPU (process tree)")
        results = {name: finish(proc) for name, proc in watchers.items()}
        # The fixed part: the same command on the finished log (start-up, final diagnosis),
        # each watcher in turn, the median of ``fixed_runs``.
        fixed: dict[str, list[float]] = {name: [] for name in trees}
        for i in range(fixed_runs):
            for name in sorted(trees, reverse=bool(i % 2)):
                fixed[name].append(timed(watch_cmd(events), _measured_env(pycache, trees[name]))[1])
        for name, (out, watch_cpu) in results.items():
            stages = sum(
                json.loads(line)["event"] == "stage" for line in out.splitlines() if line.strip()
            )
            fixed_cpu = statistics.median(fixed[name])
            print(
                f"watch ({name}) --interval {interval:g}: {stages} stages reported, "
                f"{watch_cpu:.2f} s CPU = {watch_cpu / job_cpu:.2%} of the job's CPU; fixed "
                f"cost {fixed_cpu:.2f} s (start-up and final diagnosis: median of {fixed_runs} "
                f"runs on the finished log); following itself "
                f"{(watch_cpu - fixed_cpu) / job_cpu:.2%}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    s3 = sub.add_parser("s3")
    s3.add_argument("--times", type=int, default=16)
    s3.add_argument("--runs", type=int, default=7)
    w = sub.add_parser("watch")
    w.add_argument("--rounds", type=int, default=30)
    w.add_argument("--interval", type=float, default=2.0)
    w.add_argument(
        "--baseline",
        type=Path,
        help="A source tree of another perfmodel version: its watcher follows the same job",
    )
    w.add_argument("--fixed-runs", type=int, default=5)
    args = parser.parse_args()
    if args.what == "s3":
        bench_s3(args.times, args.runs)
    else:
        bench_watch(args.rounds, args.interval, args.baseline, args.fixed_runs)


if __name__ == "__main__":
    main()
