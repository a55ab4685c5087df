"""The Dask side of ``perfmodel record``: preloads that write a Dask run's task stream.

`perfmodel record` names this file in Dask's preload settings (``distributed.scheduler``,
``.worker`` and ``.client``'s ``preload``, through ``DASK_DISTRIBUTED__*__PRELOAD``
environment variables) and sets ``PERFMODEL_DASK_DIR``; Dask then calls `dask_setup` in
the scheduler, in every worker and in every client of the user's unchanged script. The
file is loaded by path, not imported as part of perfmodel, so it depends on the standard
library and Dask only: a Python without perfmodel installed still runs it.

Each process appends JSON lines to a file of its own in ``PERFMODEL_DASK_DIR``
(docs/dask.md lists the records). A line is written and flushed as it happens, so a
process killed mid-run loses at most the line it was writing; the reader
(`perfmodel.dask.stream`) counts a damaged line and goes on. Without
``PERFMODEL_DASK_DIR`` every hook does nothing.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

DIR_ENV = "PERFMODEL_DASK_DIR"
FORMAT_VERSION = 1
PROBE_S = 0.01
"""How often a worker's lock probe asks for the interpreter lock (`_LockProbe`)."""


def _text(key: object) -> str:
    """A task key as text: Dask keys are strings or tuples (``('sum-chunk-ab12', 0, 1)``)."""
    return key if isinstance(key, str) else str(key)


class _Lines:
    """One process's JSON-lines file, written a line at a time (thread-safe)."""

    def __init__(self, kind: str) -> None:
        directory = os.environ.get(DIR_ENV, "")
        self.handle = None
        self.lock = threading.Lock()
        if not directory:
            return
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, f"{kind}-{os.getpid()}-{id(self):x}.jsonl")
        self.handle = open(path, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
        self.write({"e": "open", "kind": kind, "pid": os.getpid(), "v": FORMAT_VERSION})

    def write(self, record: dict[str, Any]) -> None:
        if self.handle is None:
            return
        record.setdefault("t", time.time())
        line = json.dumps(record, default=str, separators=(",", ":"))
        with self.lock:
            if not self.handle.closed:
                self.handle.write(line + "\n")

    def close(self) -> None:
        if self.handle is not None and not self.handle.closed:
            self.write({"e": "close"})
            with self.lock:
                self.handle.close()


try:  # the classes below need Dask; the file is only ever loaded where it is installed
    from dask.utils import key_split
    from distributed.diagnostics.plugin import SchedulerPlugin, WorkerPlugin
except ImportError:  # pragma: no cover - imported without Dask (perfmodel's own tests)
    SchedulerPlugin = WorkerPlugin = object  # type: ignore[assignment,misc]

    def key_split(key: object) -> str:  # type: ignore[misc]
        return _text(key)


class SchedulerRecorder(SchedulerPlugin):
    """Task transitions, graph submissions and workers, as the scheduler sees them."""

    name = "perfmodel-scheduler"

    def __init__(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        self.out = _Lines("scheduler")

    async def start(self, scheduler: Any) -> None:
        import distributed

        self.out.write(
            {
                "e": "scheduler",
                "address": scheduler.address,
                "version": getattr(distributed, "__version__", ""),
            }
        )

    def add_worker(self, scheduler: Any, worker: str) -> None:
        ws = scheduler.workers.get(worker)
        if ws is None:
            return
        self.out.write(
            {
                "e": "worker-added",
                "worker": worker,
                "name": _text(ws.name),
                "host": ws.host,
                "pid": ws.pid,
                "nthreads": ws.nthreads,
                "memory_limit": ws.memory_limit,
            }
        )

    def remove_worker(self, scheduler: Any, worker: str, **kwargs: Any) -> None:
        self.out.write({"e": "worker-removed", "worker": worker})

    def update_graph(self, scheduler: Any, *, keys: Any, tasks: Any, **kwargs: Any) -> None:
        self.out.write(
            {
                "e": "graph",
                "client": kwargs.get("client", ""),
                "keys": [_text(k) for k in keys],
                "tasks": [_text(k) for k in tasks],
            }
        )

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        if start != "processing" or finish not in ("memory", "erred"):
            return
        ts = self.scheduler.tasks.get(key)
        self.out.write(
            {
                "e": "task",
                "key": _text(key),
                "prefix": key_split(key),
                "group": ts.group.name if ts is not None else key_split(key),
                "status": finish,
                "worker": kwargs.get("worker") or "",
                "thread": kwargs.get("thread"),
                "startstops": [
                    {"action": s.get("action"), "start": s.get("start"), "stop": s.get("stop")}
                    | ({"source": s["source"]} if "source" in s else {})
                    for s in kwargs.get("startstops") or ()
                ],
                "nbytes": kwargs.get("nbytes"),
                "deps": [_text(d.key) for d in ts.dependencies] if ts is not None else [],
            }
        )

    async def close(self) -> None:
        self.out.close()


class _LockProbe:
    """Whether the worker's interpreter lock (CPython's GIL) is held, every `PROBE_S`.

    A thread that wakes from a sleep needs the lock to go on. Held by a thread running
    Python, it is handed over only after the interpreter's switch interval (5 ms); free, or
    released by numpy, pandas or I/O, it is taken at once (about 0.1 ms here, including the
    sleep's own overshoot). How late each wake-up was therefore tells a held lock from a
    free one, even in a worker with a single task thread, which never waits for the lock
    itself. The lateness of each probe is written, a line a second; the reader
    (`perfmodel.dag.thread_spans.lock_held_ms`) judges it. The cost: a hand-over of the lock
    every 10 ms while Python code runs.
    """

    def __init__(self, out: _Lines) -> None:
        self.out = out
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="perfmodel-lock-probe", daemon=True)

    def _run(self) -> None:
        at: list[int] = []
        lag: list[int] = []
        t0 = time.time()
        while not self.stopped.is_set():
            before = time.perf_counter()
            time.sleep(PROBE_S)
            late = max(0.0, time.perf_counter() - before - PROBE_S)
            at.append(round((time.time() - late - t0) * 1000.0))  # when it asked for the lock
            lag.append(round(late * 1e6))
            if at[-1] >= 1000 or self.stopped.is_set():
                self.out.write({"e": "lock", "t0": t0, "at": at, "lag_us": lag})
                at, lag, t0 = [], [], time.time()

    def stop(self) -> None:
        self.stopped.set()
        if self.thread.ident is not None:  # started
            self.thread.join(timeout=1.0)


class WorkerRecorder(WorkerPlugin):
    """Per task: when it took a thread, the CPU time of its thread, and when its result was
    stored with the worker's memory then (its start and end on the worker, overheads
    included, where the scheduler's ``startstops`` time the function alone).

    Dask meters each task's thread CPU itself and hands it to `Worker.digest_metric` as
    ``("execute", span, prefix, "thread-cpu", "seconds")`` right after the task's
    executing → memory transition, in the same event-loop step: the value belongs to the
    key that transition just finished (its prefix is checked).
    """

    name = "perfmodel-worker"

    def __init__(self) -> None:
        self.out = _Lines("worker")
        self.worker: Any = None
        self.last: tuple[str, str] | None = None
        self.executing: dict[Any, float] = {}
        self.ready: dict[Any, float] = {}
        self.idents: set[int] = set()
        self.probe = _LockProbe(self.out)

    def setup(self, worker: Any) -> None:
        self.worker = worker
        self.out.write({"e": "worker", "worker": worker.address, "nthreads": worker.state.nthreads})
        if self.out.handle is not None:
            self.probe.thread.start()
        digest = worker.digest_metric

        def digest_metric(name: Any, value: float) -> None:
            digest(name, value)
            last = self.last
            if (
                last is not None
                and isinstance(name, tuple)
                and len(name) == 5
                and name[0] == "execute"
                and name[2] == last[1]
                and name[3] == "thread-cpu"
            ):
                self.out.write({"e": name[3], "key": last[0], "s": value})
                self.last = None  # one value per finished task

        worker.digest_metric = digest_metric

    def transition(self, key: Any, start: str, finish: str, **kwargs: Any) -> None:
        if finish in ("ready", "constrained"):
            self.ready[key] = time.time()
            return
        if finish in ("released", "forgotten"):
            self.ready.pop(key, None)
            self.executing.pop(key, None)
            return
        if finish == "executing":
            self.executing[key] = time.time()
            return
        ready = self.ready.pop(key, None) if start == "executing" else None
        began = self.executing.pop(key, None) if start == "executing" else None
        if start != "executing" or finish != "memory":
            return
        record: dict[str, Any] = {"e": "done", "key": _text(key)}
        if began is not None:
            record["began"] = began  # when it took one of the worker's threads
        if ready is not None:
            record["ready"] = ready  # when its inputs were all on the worker
        delay = getattr(self.worker, "scheduler_delay", None)
        if isinstance(delay, int | float) and delay:
            record["delay"] = delay  # added to compute and transfer times (not disk ones)
        data = getattr(self.worker, "data", None)
        fast = getattr(data, "fast", None)
        weight = getattr(fast, "total_weight", None)
        if isinstance(weight, int | float):
            record["memory"] = weight
        spilled = getattr(data, "spilled_total", None)
        if spilled is not None:
            record["spilled"] = list(spilled)
        self.out.write(record)
        self.last = (_text(key), key_split(key))
        ident = getattr(self.worker, "threads", {}).get(key)
        if isinstance(ident, int) and ident not in self.idents:
            # py-spy and the thread sampler name threads by OS id; Dask by pthread id.
            self.idents.add(ident)
            native = next((t.native_id for t in threading.enumerate() if t.ident == ident), None)
            self.out.write({"e": "thread", "ident": ident, "native": native})

    def teardown(self, worker: Any) -> None:
        self.probe.stop()
        self.out.close()


class ClientRecorder:
    """When the client submitted each graph and when it received results: what a script
    measures around its ``compute()`` calls."""

    def __init__(self, client: Any) -> None:
        self.out = _Lines("client")
        self.out.write({"e": "client", "id": str(getattr(client, "id", ""))})
        submit = client._graph_to_futures
        gather = client._gather

        def graph_to_futures(*args: Any, **kwargs: Any) -> Any:
            began = time.time()
            futures = submit(*args, **kwargs)
            self.out.write({"e": "submit", "t": began, "keys": [_text(k) for k in futures]})
            return futures

        async def gather_results(futures: Any, *args: Any, **kwargs: Any) -> Any:
            result = await gather(futures, *args, **kwargs)
            self.out.write({"e": "gathered", "keys": _future_keys(futures)})
            return result

        client._graph_to_futures = graph_to_futures
        client._gather = gather_results


def _future_keys(futures: Any) -> list[str]:
    """Keys of the futures in a (nested) structure given to ``Client.gather``."""
    out: list[str] = []
    stack = [futures]
    while stack and len(out) < 1_000_000:
        item = stack.pop()
        key = getattr(item, "key", None)
        if key is not None and hasattr(item, "client"):
            out.append(_text(key))
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
    return out


async def dask_setup(server: Any) -> None:
    """Dask's preload entry point: attach the recorder that fits ``server``."""
    if not os.environ.get(DIR_ENV):
        return
    kind = type(server).__name__
    if kind == "Scheduler":
        server.add_plugin(SchedulerRecorder(server))
    elif kind == "Worker":
        await server.plugin_add(WorkerRecorder(), name=WorkerRecorder.name)
    elif hasattr(server, "_graph_to_futures") and hasattr(server, "_gather"):
        server._perfmodel_recorder = ClientRecorder(server)
