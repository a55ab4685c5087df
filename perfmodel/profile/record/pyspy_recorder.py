"""Sampling the Python side of a PySpark application with py-spy, one sampler per process.

Why one py-spy per Python process rather than ``py-spy record --subprocesses``: PySpark's
workers are *forks* of ``pyspark.daemon``, so their main threads share the parent's thread id,
and py-spy's chrometrace output keys stacks by thread id alone — samples of different workers
get mixed. One sampler per process keeps them apart, and lets each carry its own role
(driver or worker) and executor. Reading the recordings: `perfmodel.profile.pyspy`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from perfmodel.profile.pyspy import PySpyMeta, meta_path


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
