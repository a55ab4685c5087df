"""The local engine: a process pool sized to the machine, with a progress bar.

Workers are forked from a server that has the analysis stack imported already
(``forkserver`` with preloading), so a fresh worker costs a fork, not an import. Workers
are replaced after about `TASKS_PER_WORKER` logs each, which bounds what one worker can
accumulate (fragmented heaps, caches): the logs go to a fresh pool per batch. (The pool's
own ``max_tasks_per_child`` is not used: with it, a run of 215 logs hung for good once the
first worker retired, under Python 3.11.7 with the forkserver context.)

A log over the memory cap fails inside its worker with MemoryError and becomes an
``errors`` row (see `perfmodel.fleet.limits`). Should a worker still die (killed by the
OS, a crash in native code), the logs of its batch that had not finished are run again
one per fresh worker, so the log that kills its worker again is named in ``errors`` and
no other log is lost.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

from perfmodel.fleet.analyse import Rows, analyse_log, empty_rows, error_rows
from perfmodel.fleet.discover import LogRef
from perfmodel.profile.record.children import exit_with
from perfmodel.profile.sources.stores import SourceOptions
from perfmodel.simulate.whatif import Change

TASKS_PER_WORKER = 64
_PRELOAD = ["perfmodel.fleet.analyse", "perfmodel.analysis"]


def default_jobs() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _pool(workers: int) -> ProcessPoolExecutor:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    # Workers are the server's children, not ours: each ends itself when we do (kill -9
    # included), instead of finishing its log for nobody.
    return ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=exit_with, initargs=(os.getpid(),)
    )


def merge_rows(into: Rows, rows: Rows) -> None:
    for name, values in rows.items():
        into[name].extend(values)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a local run, carrying the rows of the logs that were finished (and
    those logs), so the caller can keep them: a long run interrupted need not start over."""

    def __init__(self, rows: Rows, finished: list[LogRef]) -> None:
        super().__init__()
        self.rows, self.finished = rows, finished


def run_local(
    refs: Sequence[LogRef],
    scenarios: Sequence[Change],
    *,
    jobs: int | None = None,
    memory_cap_bytes: int | None = None,
    on_done: Callable[[LogRef], None] | None = None,
    sources: SourceOptions | None = None,
) -> Rows:
    """Every log's rows (in no particular order; the writer sorts). ``sources`` says how
    the workers reach remote logs."""
    out = empty_rows()
    if not refs:
        return out
    workers = max(1, min(jobs or default_jobs(), len(refs)))
    batch = workers * TASKS_PER_WORKER
    finished: list[LogRef] = []

    def done(ref: LogRef) -> None:
        finished.append(ref)
        if on_done is not None:
            on_done(ref)

    try:
        pending: list[LogRef] = []
        for first in range(0, len(refs), batch):
            pending += _run_batch(
                refs[first : first + batch],
                scenarios,
                workers,
                memory_cap_bytes,
                out,
                done,
                sources,
            )
        for ref in pending:  # a worker died: isolate each unfinished log in a worker of its own
            merge_rows(out, _run_isolated(ref, scenarios, memory_cap_bytes, sources))
            done(ref)
    except KeyboardInterrupt as stop:
        raise Interrupted(out, finished) from stop
    return out


def _run_batch(
    refs: Sequence[LogRef],
    scenarios: Sequence[Change],
    workers: int,
    cap: int | None,
    out: Rows,
    on_done: Callable[[LogRef], None] | None,
    sources: SourceOptions | None = None,
) -> list[LogRef]:
    """Run ``refs`` in a fresh pool; the logs left unfinished if a worker died."""
    done: set[str] = set()
    with _pool(workers) as pool:
        futures: dict[Future[Rows], LogRef] = {
            pool.submit(analyse_log, ref, scenarios, memory_cap_bytes=cap, sources=sources): ref
            for ref in refs
        }
        try:
            for future in as_completed(futures):
                ref = futures[future]
                merge_rows(out, future.result())
                done.add(ref.path)
                if on_done is not None:
                    on_done(ref)
        except BrokenProcessPool:
            return [ref for ref in refs if ref.path not in done]
        except KeyboardInterrupt:
            # Not the rest of the batch first (leaving the block would wait for it).
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return []


def _run_isolated(
    ref: LogRef, scenarios: Sequence[Change], cap: int | None, sources: SourceOptions | None
) -> Rows:
    with _pool(1) as pool:
        try:
            return pool.submit(
                analyse_log, ref, scenarios, memory_cap_bytes=cap, sources=sources
            ).result()
        except BrokenProcessPool:
            return error_rows(
                ref,
                "worker_died",
                "the process analysing this log died (killed for memory, or a crash in "
                "native code); lower --jobs or raise --memory-cap",
            )
