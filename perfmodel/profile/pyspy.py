"""py-spy: sampling the Python side of a PySpark application, and reading its recordings.

Why one py-spy per Python process rather than ``py-spy record --subprocesses``: PySpark's
workers are *forks* of ``pyspark.daemon``, so their main threads share the parent's thread id,
and py-spy's chrometrace output keys stacks by thread id alone — samples of different workers
get mixed. One sampler per process keeps them apart, and lets each carry its own role
(driver or worker) and executor.

Why chrometrace: it is py-spy's only output with time stamps (microseconds since the sampler
started); the wall clock taken just before starting py-spy aligns them with the event log (error:
py-spy's start-up, a few milliseconds). Chrometrace records *changes* of a thread's stack, so
samples are rebuilt from the time each stack lasted. ``--idle`` is on so that a thread's stack is
refreshed at every sample; without it a thread that went idle would keep its last busy stack until
it woke up, smearing busy time over idle time.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import psutil
import pyarrow as pa

from perfmodel.errors import PerfmodelError
from perfmodel.profile import sampletable
from perfmodel.profile.sampletable import StackDictionary


class PySpyError(PerfmodelError):
    """A py-spy recording could not be read, or py-spy could not sample."""


@dataclass(slots=True)
class PySpyMeta:
    """What a recording needs besides py-spy's own output (kept in ``<file>.meta.json``)."""

    pid: int
    start_ms: float
    """Wall clock (epoch ms) taken just before py-spy started: time zero of its time stamps."""
    interval_ms: float
    role: str = "python"
    """"python driver", "python worker" or "python" (unknown)."""
    executor_id: str | None = None
    ppid: int | None = None
    cmdline: list[str] = field(default_factory=list)
    start_estimated: bool = False
    """True when ``start_ms`` was inferred from the file's modification time."""

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=1), encoding="utf-8")

    @classmethod
    def read(cls, path: Path) -> PySpyMeta:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


@dataclass(slots=True)
class PySpyRecording:
    """Samples of one py-spy file; ``error`` set means nothing could be read."""

    path: str
    meta: PySpyMeta | None = None
    samples: pa.Table = field(default_factory=sampletable.empty_table)
    warnings: list[str] = field(default_factory=list)
    error: str | None = None


def meta_path(recording: Path) -> Path:
    return recording.with_name(recording.name + ".meta.json")


def py_spy_executable() -> str | None:
    """py-spy next to the running interpreter (the venv), else on PATH."""
    here = Path(sys.executable).parent / "py-spy"
    if here.is_file():
        return str(here)
    return shutil.which("py-spy")


def py_spy_version(exe: str) -> str:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.stdout.strip()


# --------------------------------------------------------------------------- reading


def read_pyspy(
    path: str | Path, meta: PySpyMeta | None = None, *, name: str | None = None
) -> PySpyRecording:
    """Samples of a py-spy chrometrace file, on the wall clock.

    ``meta`` defaults to the ``.meta.json`` beside the file; without one, time zero is
    estimated as the file's modification time minus its last time stamp (py-spy writes the file
    right after its last sample), and the recording says so in ``warnings``.
    """
    path = Path(path)
    rec = PySpyRecording(path=name or str(path))
    try:
        events = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        rec.error = (
            f"{path} is not py-spy chrometrace output ({exc.__class__.__name__}); record with "
            "`py-spy record --format chrometrace`"
        )
        return rec
    if not isinstance(events, list) or not all(
        isinstance(e, dict) and "ph" in e and "ts" in e for e in events[:100]
    ):
        rec.error = (
            f"{path} is JSON but not py-spy chrometrace output (speedscope or another format?); "
            "record with `py-spy record --format chrometrace`"
        )
        return rec
    if meta is None and meta_path(path).is_file():
        meta = PySpyMeta.read(meta_path(path))
    if meta is None:
        last_us = max((float(e.get("ts", 0)) for e in events), default=0.0)
        pid = next((int(e["pid"]) for e in events if "pid" in e), -1)
        meta = PySpyMeta(
            pid=pid,
            start_ms=path.stat().st_mtime * 1000.0 - last_us / 1000.0,
            interval_ms=10.0,
            start_estimated=True,
        )
        rec.warnings.append(
            f"{path}: no .meta.json beside it; its start time was estimated from the file's "
            "modification time and the sampling interval assumed to be py-spy's default 10 ms"
        )
    rec.meta = meta
    rec.samples = _samples(events, meta, rec.path)
    return rec


def _samples(events: list[dict], meta: PySpyMeta, label: str) -> pa.Table:
    """Rebuild samples from chrometrace begin/end events (see the module docstring)."""
    thread_names: dict[tuple[int, int], str] = {}
    stacks_now: dict[tuple[int, int], list[tuple[str, int]]] = {}
    last_change: dict[tuple[int, int], float] = {}
    segments: list[tuple[tuple[int, int], float, float, tuple[tuple[str, int], ...]]] = []
    # Events are written in time order; group the changes of one thread at one time stamp.
    for event in events:
        ph = event.get("ph")
        key = (int(event.get("pid", 0)), int(event.get("tid", 0)))
        if ph == "M":
            raw = str((event.get("args") or {}).get("name", ""))
            thread_names[key] = raw
            continue
        if ph not in ("B", "E"):
            continue
        ts = float(event["ts"])
        args = event.get("args") or {}
        filename = str(args.get("filename") or "")
        name = str(event.get("name", ""))
        if not filename and name.startswith("process "):
            continue  # --subprocesses adds a pseudo frame per process
        stack = stacks_now.setdefault(key, [])
        prev = last_change.get(key)
        if prev is not None and ts > prev and stack:
            segments.append((key, prev, ts, tuple(stack)))
        last_change[key] = ts
        if ph == "B":
            line = args.get("line")
            stack.append((f"{name} ({filename})", int(line) if line is not None else 0))
        elif stack:
            stack.pop()
    interval_us = meta.interval_ms * 1000.0
    names: list[str] = []
    name_ids: dict[str, int] = {}
    stack_ids: dict[tuple[tuple[str, int], ...], int] = {}
    frames: list[np.ndarray] = []
    lines: list[np.ndarray] = []
    ts_out: list[np.ndarray] = []
    sid_out: list[np.ndarray] = []
    keys_out: list[np.ndarray] = []
    key_ids: dict[tuple[int, int], int] = {}
    for key, start, end, stack in segments:
        sid = stack_ids.get(stack)
        if sid is None:
            sid = len(frames)
            stack_ids[stack] = sid
            ids = []
            for frame, _line in stack:
                fid = name_ids.get(frame)
                if fid is None:
                    fid = len(names)
                    name_ids[frame] = fid
                    names.append(frame)
                ids.append(fid)
            frames.append(np.array(ids, dtype=np.int32))
            lines.append(np.array([ln for _f, ln in stack], dtype=np.int32))
        count = max(1, int(round((end - start) / interval_us)))
        ts_out.append(start + np.arange(count) * interval_us)
        sid_out.append(np.full(count, sid, dtype=np.int64))
        keys_out.append(np.full(count, key_ids.setdefault(key, len(key_ids)), dtype=np.int64))
    if not ts_out:
        return sampletable.empty_table()
    ts_us = np.concatenate(ts_out)
    sids = np.concatenate(sid_out)
    kidx = np.concatenate(keys_out)
    order = np.argsort(ts_us, kind="stable")
    ts_us, sids, kidx = ts_us[order], sids[order], kidx[order]
    key_list = list(key_ids)
    thread_id, thread_name = [], []
    for pid_tid in key_list:
        label_name = thread_names.get(pid_tid, "")
        os_id, _, tname = label_name.partition(": ")
        thread_id.append(int(os_id) if os_id.isdigit() else pid_tid[1])
        thread_name.append(tname or "python thread")
    n = len(ts_us)
    idle_stacks = np.array([_waiting_for_task(names, f) for f in frames], dtype=bool)
    kind = np.where(idle_stacks[sids], "idle", "python")
    frames_col, lines_col = sampletable.stack_columns(StackDictionary(names, frames, lines), sids)
    return sampletable.make_table(
        {
            "timestamp_ms": meta.start_ms + ts_us / 1000.0,
            "source": pa.array(["pyspy"] * n, pa.string()),
            "kind": pa.array(kind, pa.string()),
            "weight_ms": np.full(n, meta.interval_ms),
            "process": pa.array([meta.role] * n, pa.string()),
            "pid": pa.array([key_list[k][0] or meta.pid for k in kidx], pa.int64()),
            "executor_id": pa.array([meta.executor_id] * n, pa.string()),
            "thread_id": pa.array([thread_id[k] for k in kidx], pa.int64()),
            "thread": pa.array([thread_name[k] for k in kidx], pa.string()),
            "task_events": np.zeros(n, dtype=bool),
            "stack_id": pa.array(sids, pa.int64()),
            "frames": frames_col,
            "lines": lines_col,
            "recording": pa.array([label] * n, pa.string()),
        }
    )


def _waiting_for_task(names: list[str], frame_ids: np.ndarray) -> bool:
    """True for a PySpark worker parked between tasks.

    A reused worker waits for its next task in a ``read_int`` at the start of ``worker.main``
    (Spark 4 wraps it in ``SparkMessageReceiver.get_init_message``). With ``--idle`` those
    samples are recorded too, and they must not count as work of whatever task the executor
    runs meanwhile. Waiting *inside* a task (for input rows) has other callers.
    """
    if len(frame_ids) < 2 or not names[frame_ids[-1]].startswith("read_int ("):
        return False
    parent = names[frame_ids[-2]]
    if parent.startswith("main (") and parent.rstrip(")").endswith("worker.py"):
        return True
    return any(".get_init_message (" in names[f] for f in frame_ids[-4:])


# --------------------------------------------------------------------------- recording


def _is_python(proc: psutil.Process) -> bool:
    try:
        cmd = proc.cmdline()
        name = proc.name()
    except (psutil.Error, OSError):
        return False
    exe = os.path.basename(cmd[0]) if cmd else ""
    return name.startswith("python") or exe.startswith("python")


def _is_daemon(cmd: Sequence[str]) -> bool:
    return any("pyspark.daemon" in part for part in cmd)


def _executor_of(proc: psutil.Process) -> str | None:
    """The executor a Python process serves: its nearest JVM ancestor's ``--executor-id``."""
    try:
        for parent in proc.parents():
            cmd = parent.cmdline()
            if cmd and os.path.basename(cmd[0]).startswith("java"):
                if "--executor-id" in cmd:
                    i = cmd.index("--executor-id")
                    return cmd[i + 1] if i + 1 < len(cmd) else None
                return "driver"
    except (psutil.Error, OSError):
        return None
    return None


@dataclass(slots=True)
class _Sampler:
    """One py-spy process. It is reaped with ``wait4`` rather than through ``Popen``, so its
    CPU time (what sampling cost the machine, `recording_cost`) is known once it has ended."""

    proc: subprocess.Popen[bytes]
    target: int
    output: Path
    log: Path
    interrupted: bool = False
    cpu_s: float = 0.0
    """py-spy's own CPU time (user + system), set when it has been reaped."""

    def poll(self) -> int | None:
        """py-spy's exit code once it has ended, else None (never blocks)."""
        if self.proc.returncode is None:
            self._reap(os.WNOHANG)
        return self.proc.returncode

    def interrupt(self) -> None:
        """Ask py-spy to write its file and exit (it stops sampling on SIGINT).

        ``os.kill`` rather than ``Popen.send_signal``, which would reap an ended py-spy with
        ``waitpid`` and lose its CPU time; the pid cannot have been reused before we reap it.
        """
        if self.poll() is None:
            os.kill(self.proc.pid, signal.SIGINT)
            self.interrupted = True

    def wait(self, timeout_s: float) -> int:
        """Wait up to ``timeout_s`` for py-spy to end, then kill it."""
        deadline = time.monotonic() + timeout_s
        while self.poll() is None:
            if time.monotonic() >= deadline:
                os.kill(self.proc.pid, signal.SIGKILL)
                self._reap(0)
                break
            time.sleep(0.01)
        return self.proc.returncode if self.proc.returncode is not None else -signal.SIGKILL

    def _reap(self, flags: int) -> None:
        try:
            pid, status, usage = os.wait4(self.proc.pid, flags)
        except ChildProcessError:  # reaped elsewhere: its exit code and CPU time are lost
            self.proc.returncode = 0
            return
        if pid:
            self.proc.returncode = os.waitstatus_to_exitcode(status)
            self.cpu_s = usage.ru_utime + usage.ru_stime


@dataclass(slots=True)
class _Target:
    """A Python process being sampled, or paused because it has been blocked a while."""

    handle: psutil.Process
    cmd: list[str]
    role: str
    sampler: _Sampler | None = None
    cpu_s: float = -1.0
    idle_since: float | None = None
    recordings: int = 0


class PySpyRecorder:
    """Starts one py-spy per Python process below a root process, as they appear.

    Call :meth:`poll` periodically while the application runs and :meth:`stop` when it has
    ended; the ``pyspark.daemon`` fork server itself is skipped (it only forks workers), its
    forked workers are sampled.

    A process whose CPU time has not moved for ``idle_stop_s`` (a worker parked between
    tasks, a driver blocked in py4j while a job runs) cannot change its stack, yet py-spy
    costs the same on it as on a busy one; its sampler is stopped and a new one started when
    the process runs again (the samples of one process may then span several recordings).
    Stopping py-spy with SIGSTOP instead would not do: its timer keeps the schedule and takes
    the missed samples back to back when continued. The price: up to one poll period plus
    py-spy's attach time at the start of activity after an idle spell is not sampled.
    ``idle_stop_s=None`` samples every process for its whole life.
    """

    def __init__(
        self, out_dir: Path, interval_ms: float, exe: str, idle_stop_s: float | None = 1.0
    ) -> None:
        self.out_dir = out_dir
        self.interval_ms = interval_ms
        self.exe = exe
        self.idle_stop_s = idle_stop_s
        self.samplers: list[_Sampler] = []
        self.targets: dict[int, _Target] = {}
        self.seen: set[int] = set()
        self.warnings: list[str] = []

    def poll(self, tree: list[psutil.Process]) -> None:
        """Start samplers for new Python processes in ``tree`` (the root and its descendants,
        `ProcessTree.processes`), and stop or restart those of processes that went idle or
        woke up."""
        for proc in tree:
            if proc.pid in self.seen:
                continue
            self.seen.add(proc.pid)
            if not _is_python(proc):
                continue
            try:
                cmd = proc.cmdline()
                parent = proc.parent()
                parent_cmd = parent.cmdline() if parent is not None else []
            except (psutil.Error, OSError):
                continue
            if _is_daemon(cmd) and not _is_daemon(parent_cmd):
                continue
            role = "python worker" if _is_daemon(cmd) else "python driver"
            target = _Target(proc, cmd, role)
            self.targets[proc.pid] = target
            self._start(target)
        if self.idle_stop_s is not None:
            self._gate(time.monotonic(), self.idle_stop_s)

    def _gate(self, now: float, idle_stop_s: float) -> None:
        for pid, target in list(self.targets.items()):
            if target.sampler is not None and target.sampler.poll() is not None:
                del self.targets[pid]  # py-spy ended by itself (no permission, ...): no retry
                continue
            try:
                times = target.handle.cpu_times()
            except (psutil.Error, OSError):
                del self.targets[pid]  # gone: its sampler ends by itself
                continue
            cpu = times.user + times.system
            moved = cpu != target.cpu_s
            target.cpu_s = cpu
            if moved:
                target.idle_since = None
                if target.sampler is None:
                    self._start(target)
            elif target.idle_since is None:
                target.idle_since = now
            elif target.sampler is not None and now - target.idle_since >= idle_stop_s:
                target.sampler.interrupt()
                target.sampler = None

    def _start(self, target: _Target) -> None:
        proc = target.handle
        suffix = f"-{target.recordings}" if target.recordings else ""
        target.recordings += 1
        output = self.out_dir / f"pyspy-{proc.pid}{suffix}.json"
        log = self.out_dir / f"pyspy-{proc.pid}{suffix}.log"
        rate = max(1, int(round(1000.0 / self.interval_ms)))
        argv = [self.exe, "record", "--pid", str(proc.pid), "--rate", str(rate)]
        # --nonblocking: read the target's memory without pausing it. A paused worker is
        # overhead the job pays on every sample; an occasional torn stack is not.
        # --nolineno: py-spy otherwise reads and decodes every frame's line table on every
        # sample, a quarter of its CPU (measured on a 27-frame stack at 50 Hz: 24 → 17 ms of
        # CPU per second); functions are what attribution and the code models use.
        argv += ["--format", "chrometrace", "--idle", "--nonblocking", "--nolineno"]
        argv += ["--output", str(output)]
        try:
            ppid = proc.ppid()
        except (psutil.Error, OSError):
            return
        meta = PySpyMeta(
            pid=proc.pid,
            start_ms=time.time() * 1000.0,
            interval_ms=1000.0 / rate,
            role=target.role,
            executor_id=_executor_of(proc) if target.role == "python worker" else "driver",
            ppid=ppid,
            cmdline=target.cmd,
        )
        with log.open("wb") as handle:
            popen = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=handle, stderr=subprocess.STDOUT
            )
        meta.write(meta_path(output))
        target.sampler = _Sampler(popen, proc.pid, output, log)
        self.samplers.append(target.sampler)

    def stop(self, timeout_s: float = 10.0) -> list[Path]:
        """Let every py-spy write its file (interrupting those whose target still runs).

        Returns the recordings written; problems (no ptrace permission, ...) land in
        ``warnings``, each kind once.
        """
        deadline = time.monotonic() + timeout_s
        for sampler in self.samplers:
            if sampler.interrupted:
                continue  # stopped when its process went idle; writing its file
            if sampler.poll() is None and not psutil.pid_exists(sampler.target):
                continue  # exiting on its own
            sampler.interrupt()
        written: list[Path] = []
        denied = False
        for sampler in self.samplers:
            sampler.wait(max(0.1, deadline - time.monotonic()))
            text = sampler.log.read_text(encoding="utf-8", errors="replace")
            if sampler.output.is_file() and sampler.output.stat().st_size > 0:
                written.append(sampler.output)
            elif "Permission Denied" in text or "ptrace" in text.lower():
                denied = True
            meta = meta_path(sampler.output)
            if not sampler.output.is_file() and meta.is_file():
                meta.unlink()
        if denied:
            self.warnings.append(
                "py-spy could not attach (no ptrace permission): Python samples are missing. "
                "Run as root, set kernel.yama.ptrace_scope=0, or give the container "
                "CAP_SYS_PTRACE."
            )
        return written

    @property
    def cpu_s(self) -> float:
        """CPU time of every py-spy started so far that has ended (all of them after
        :meth:`stop`)."""
        return sum(sampler.cpu_s for sampler in self.samplers)


def recordings_in(directory: Path) -> list[Path]:
    """The py-spy recordings (not their sidecars) in a directory."""
    return sorted(p for p in directory.glob("*.json") if not p.name.endswith(".meta.json"))
