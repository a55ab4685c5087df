"""Workloads die with perfmodel, and what an earlier, killed perfmodel left running is found.

`record` (and `experiment run`, which records every run) starts the user's command. If
perfmodel is killed with ``kill -9`` it cannot clean up, and a Spark driver left running
keeps its cores and skews every later measurement. So each workload starts

* in a process group of its own (its descendants can be found and stopped as one, and the
  terminal's Ctrl-C reaches perfmodel, which passes it on; not being in the terminal's
  foreground, it does not read the terminal: see `workload_stdin`), and
* with a parent-death signal (Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)``): the kernel kills
  the command the moment perfmodel dies, however it dies.

The parent-death signal reaches the command's own process only. Its descendants (a
PySpark driver that ``spark-submit``'s JVM started, a shell's background jobs) share its
process group, so a small reaper process (`group_dies_with_us`) holds the read end of a pipe
whose write end only perfmodel has: when perfmodel dies, however it dies, the pipe reads end
of file and the reaper kills the whole group. When the workload ends normally perfmodel says
so through the pipe first, and the reaper leaves the group alone.

Should even the reaper be killed (``kill -9`` of both), each workload leaves a small file in
the state directory while it runs, and the next `record` or `experiment run` reports the
groups whose perfmodel is gone but whose processes are not.

Process pools (``fleet --jobs N``) are forked from a server process, not from perfmodel, so
their workers watch perfmodel itself (`exit_with`): a thread waits on a pidfd of perfmodel
and ends the worker the moment perfmodel is gone.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from perfmodel.state import state_dir

_PR_SET_PDEATHSIG = 1
_WORKLOADS_DIR = "workloads"


def _prctl() -> Callable[..., int] | None:
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return prctl
    except (OSError, AttributeError):  # not Linux
        return None


REAPER_MARK = "perfmodel-workload-reaper"
"""The reaper's first argument: how a person (or a test) tells it in a process list."""

_REAPER = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
line = b""
try:
    while not line.endswith(b"\\n"):
        more = os.read(int(sys.argv[2]), 32)
        if not more:
            break
        line += more
except OSError:
    pass
if not line.endswith(b"\\n"):
    sys.exit(0)
group = int(line)
try:
    said = os.read(0, 1)
except OSError:
    said = b""
if said != b"x":
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""
"""The reaper: first the workload's group, a line on the group pipe, written by the workload
itself before it runs any of its own code (end of file there: no workload was started, and
there is nothing to watch); then, on its standard input, one byte ``x`` means the workload
ended and perfmodel lives (leave the group), end of file means perfmodel died (kill the
group). It ignores the terminal's Ctrl-C and a plain ``kill``: only the pipes decide."""


@contextmanager
def group_dies_with_us() -> Iterator[Callable[[], None]]:
    """Start a reaper (module doc), then yield the ``preexec_fn`` for the workload's
    `subprocess.Popen`: the workload gets a process group of its own and a parent-death
    signal, and tells the reaper its group before it runs any of its own code. While the
    block runs, that group is killed if this process dies, however it dies. Leaving the
    block, normally or by an exception, disarms the reaper.

    The reaper starts before the workload, so no moment exists in which the workload (and
    whatever it starts) runs unwatched: were the reaper started once the workload had
    started, a ``kill -9`` in between would leave the workload's descendants running.
    Everything the workload's side needs is looked up before the fork; in the child it only
    makes system calls. A parent that died between the fork and the ``prctl`` is caught by
    comparing the parent's pid afterwards."""
    said_r, said_w = os.pipe()  # not inheritable: only the reaper gets the read ends
    group_r, group_w = os.pipe()
    try:
        reaper = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _REAPER, REAPER_MARK, str(group_r)],
            stdin=said_r,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(group_r,),
            start_new_session=True,  # the terminal's signals are perfmodel's to pass on
        )
    except OSError:
        os.close(said_w)
        os.close(group_w)
        raise
    finally:
        os.close(said_r)
        os.close(group_r)
    prctl = _prctl()
    parent = os.getpid()

    def preexec() -> None:
        os.setpgid(0, 0)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(137)
        # The write end closes at exec (it is not inheritable), the reaper keeps the line.
        os.write(group_w, b"%d\n" % os.getpid())

    try:
        yield preexec
    finally:
        os.close(group_w)  # no workload started: the reaper reads end of file and leaves
        with contextlib.suppress(OSError):
            os.write(said_w, b"x")
        os.close(said_w)
        reaper.wait()


def exit_with(owner: int) -> None:
    """End this process the moment process ``owner`` ends: for the workers of a process pool
    (``initializer=exit_with, initargs=(os.getpid(),)``), whose parent is the pool's server,
    not ``owner``. A daemon thread waits on a pidfd of ``owner`` (no polling); where pidfds
    are missing (Linux before 5.3, other systems) it checks once a second."""
    try:
        fd: int | None = os.pidfd_open(owner)
    except (AttributeError, OSError):
        fd = None
    if fd is None and not _running(owner):
        os._exit(1)

    def watch() -> None:
        if fd is not None:
            select.select([fd], [], [])
        else:
            while _running(owner):
                time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-owner", daemon=True).start()


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def workload_stdin() -> int | None:
    """The workload's standard input: inherited, unless it is the terminal.

    A process group of its own is not the terminal's foreground group, and the kernel stops
    (SIGTTIN) a background process that reads the terminal: an interactive command would hang
    unseen. Reading nothing, it ends instead; piped input still reaches it.
    """
    try:
        return subprocess.DEVNULL if os.isatty(0) else None
    except OSError:
        return None


def signal_group(pid: int, signum: int) -> None:
    """Send ``signum`` to the process group a workload leads (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


def workloads_dir() -> Path:
    return state_dir() / _WORKLOADS_DIR


@dataclass(frozen=True, slots=True)
class Orphan:
    """A process of a workload whose perfmodel is gone."""

    pid: int
    group: int
    name: str
    owner: int
    """The pid of the perfmodel process that started the workload."""
    command: str

    def describe(self) -> str:
        return (
            f"process {self.pid} ({self.name}) of a workload started by perfmodel process "
            f"{self.owner}, which is gone, is still running: {self.command}; stop it with "
            f"`kill -- -{self.group}`"
        )


def register(pid: int, command: Sequence[str]) -> Path | None:
    """Note a started workload (its pid leads its process group) until `unregister`."""
    directory = workloads_dir()
    path = directory / f"{os.getpid()}-{pid}.json"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        me = psutil.Process()
        payload = {
            "owner": me.pid,
            "owner_started": me.create_time(),
            "group": pid,
            "command": " ".join(command)[:500],
        }
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(payload), encoding="utf-8")
        tmp.replace(path)
    except (OSError, psutil.Error):
        return None  # the workload still runs; only the later report of orphans is lost
    return path


def unregister(path: Path | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def find_orphans() -> list[Orphan]:
    """Processes of workloads whose perfmodel died; notes of workloads that are fully gone
    are removed on the way."""
    directory = workloads_dir()
    try:
        notes = sorted(directory.glob("*.json"))
    except OSError:
        return []
    orphans: list[Orphan] = []
    groups: dict[int, list[psutil.Process]] | None = None
    for note in notes:
        try:
            data = json.loads(note.read_text(encoding="utf-8"))
            owner, started, group = (
                int(data["owner"]),
                float(data["owner_started"]),
                int(data["group"]),
            )
            command = str(data.get("command", ""))
        except (OSError, ValueError, KeyError, TypeError):
            unregister(note)
            continue
        if _alive(owner, started):
            continue
        if groups is None:
            groups = _process_groups()
        members = groups.get(group, [])
        if not members:
            unregister(note)
            continue
        for proc in members:
            try:
                name = proc.name()
            except psutil.Error:
                continue
            orphans.append(Orphan(proc.pid, group, name, owner, command))
    return orphans


def _alive(pid: int, started: float) -> bool:
    try:
        return abs(psutil.Process(pid).create_time() - started) < 1.0
    except psutil.Error:
        return False


def _process_groups() -> dict[int, list[psutil.Process]]:
    groups: dict[int, list[psutil.Process]] = {}
    for proc in psutil.process_iter():
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                continue
            groups.setdefault(os.getpgid(proc.pid), []).append(proc)
        except (psutil.Error, OSError):
            continue
    return groups
