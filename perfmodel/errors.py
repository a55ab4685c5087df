"""Exceptions whose message is meant for the user.

The CLI prints ``str(exc)`` of any :class:`PerfmodelError` as is (no traceback) and exits with
status 2, so every message must say what went wrong *and* what the user can do about it. Anything
that is not a ``PerfmodelError`` is a bug and keeps its traceback.
"""

from __future__ import annotations


class PerfmodelError(Exception):
    """Base class: a problem with the user's input or environment, not a bug in perfmodel."""


class EventLogNotFoundError(PerfmodelError):
    """The path given for an event log does not exist (nor does anything it could mean)."""


class NotAnEventLogError(PerfmodelError):
    """The path exists but holds no readable Spark event log (empty, binary, unknown codec)."""


class AmbiguousEventLogError(PerfmodelError):
    """The path holds event logs of several applications; the user has to pick one."""


class DecompressionLimitError(PerfmodelError):
    """Decompressed data exceeded the configured cap (a guard against decompression bombs).

    ``file`` and ``limit`` are kept as attributes so a caller can rephrase the hint, e.g. with
    the name of its own command-line option.
    """

    def __init__(self, message: str, *, file: str = "", limit: int = 0) -> None:
        super().__init__(message)
        self.file = file
        self.limit = limit
