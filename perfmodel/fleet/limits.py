"""The per-log memory cap: a log too large for it is recorded as an error, never a crash.

The cap bounds the address space the analysis of one log may *add* to its process:
``RLIMIT_AS`` (what ``ulimit -v`` sets) is set to what the process has mapped when the
log starts plus the cap, for the duration of that log, so the figure means the same in a
pool worker and in a reused PySpark worker whatever each had mapped before. It counts
address space, not resident memory: memory the process freed but kept mapped is reused
without counting, which is why small logs pass even a small cap, while a log that needs
large new buffers (a huge decompressed stream or event, many tasks) fails. Allocation
beyond it raises `MemoryError` inside the analysis, which unwinds and frees what the log
had built; the worker goes on with the next log. Only the soft limit is set, and it is
restored afterwards, so no privilege is needed.
"""

from __future__ import annotations

import contextlib
import resource
from collections.abc import Iterator


def mapped_bytes() -> int:
    """The process's current virtual memory size (Linux ``/proc/self/statm``)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[0])
    return pages * resource.getpagesize()


@contextlib.contextmanager
def memory_cap(cap_bytes: int | None) -> Iterator[None]:
    """Within the block, mapping more than ``cap_bytes`` beyond what is mapped now raises
    MemoryError."""
    if not cap_bytes:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = mapped_bytes() + cap_bytes
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
