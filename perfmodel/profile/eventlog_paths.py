"""Finding the Spark event log a user's path means.

Spark writes an application's event log in several shapes, and users point at them in several
ways, so resolving "the log the user means" is a step of its own:

* a single file ``<appId>[_<attempt>][.<codec>][.inprogress]`` (Spark 1.3+);
* a rolling directory ``eventlog_v2_<appId>[_<attempt>]/`` with parts ``events_<n>_...`` and an
  ``appstatus_...[.inprogress]`` marker (Spark 3.0+, the default since Spark 4);
* a legacy directory with ``EVENT_LOG_<n>`` files and an ``APPLICATION_COMPLETE`` marker
  (Spark 1.0-1.2);
* a directory holding any of the above, or a path prefix naming an application whose attempts
  (``<appId>_1``, ``<appId>_2``) lie beside it.

Reading the parts it finds is `perfmodel.profile.eventlog`'s job.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from perfmodel.errors import (
    AmbiguousEventLogError,
    EventLogNotFoundError,
    NotAnEventLogError,
    PerfmodelError,
)
from perfmodel.profile.bundle import has_bundle_parts
from perfmodel.profile.codec_streams import StreamProblem
from perfmodel.profile.codecs import (
    CODEC_SUFFIXES,
    DEFAULT_MAX_DECOMPRESSED,
    HEAD_SIZE,
    iter_decompressed,
    sniff_codec,
)
from perfmodel.profile.sources.locate import log_path
from perfmodel.profile.sources.stores import LogPath, RemotePath, open_input, scandir

_ROLLING_PREFIX = "eventlog_v2_"
_APPSTATUS_PREFIX = "appstatus_"
_EVENTS_RE = re.compile(r"events_(\d+)_(.+)")
_LEGACY_EVENTS_RE = re.compile(r"EVENT_LOG_(\d+)")
_LEGACY_COMPLETE = "APPLICATION_COMPLETE"
_IN_PROGRESS = ".inprogress"
_COMPACT = ".compact"
# Suffixes people add to plain logs; stripped from the app key only.
_PLAIN_SUFFIXES = frozenset({"json", "jsonl", "txt", "log"})
# YARN application ids contain underscores themselves; other ids (local-…, app-…, spark-…) do not.
_YARN_ATTEMPT_RE = re.compile(r"(application_\d+_\d+)_(\d+)")
_OTHER_ATTEMPT_RE = re.compile(
    r"(local-\d+|app-\d{14}-\d+|spark-[0-9a-f]{32}|spark-application-\d+)_(\d+)"
)
"""An attempt after an app id of Spark's other cluster managers (local, standalone,
Kubernetes): ``_N`` after any other name (``report_2024``, ``myapp_3``) is part of the name."""
_MAX_LISTED = 20
_APP_START_EVENT = "SparkListenerApplicationStart"
_APP_START_WITHIN = 8 << 20
"""Decompressed bytes read looking for the application-start event, to name the application
in a message: it follows the environment, whose size this bounds (a few hundred KiB at most
in practice)."""


@dataclass(slots=True)
class EventLogSource:
    """What a user's path resolved to."""

    path: LogPath  # the path the user gave (local, or remote: `perfmodel.profile.sources`)
    app_key: str  # app id (+ attempt) as inferred from the name
    parts: list[LogPath]  # files to read, in order
    attempt: str | None
    other_attempts: list[str] = field(default_factory=list)
    in_progress: bool = False
    missing_parts: list[tuple[int, int]] = field(default_factory=list)
    """Runs of numbers absent from a rolling (or legacy) log's parts, first and last of each:
    ``(2, 2)`` for events_1, events_3. Runs, not numbers: a part numbered 1,000,000 after
    part 1 costs one run, not a million entries."""


# ---------------------------------------------------------------------------------------------
# Names


def _split_name(name: str) -> tuple[str, bool]:
    """``(key, in_progress)`` from a log file name: strip ``.inprogress``/``.compact``/codec."""
    in_progress = False
    while True:
        if name.endswith(_IN_PROGRESS):
            name = name[: -len(_IN_PROGRESS)]
            in_progress = True
        elif name.endswith(_COMPACT):
            name = name[: -len(_COMPACT)]
        else:
            break
    stem, dot, ext = name.rpartition(".")
    if dot and stem and (ext.lower() in CODEC_SUFFIXES or ext.lower() in _PLAIN_SUFFIXES):
        name = stem
    return name, in_progress


def _split_attempt(key: str) -> tuple[str, str | None]:
    """``(app id, attempt)`` from a key; Spark appends ``_<attempt>`` to the app id.

    Only numeric attempts after an app id of a shape Spark gives count, so names like
    ``spark_event_log_example``, ``my_job_2024`` or ``myapp_3`` are not misread as attempts.
    """
    m = _YARN_ATTEMPT_RE.fullmatch(key)
    if m is None and not key.startswith("application_"):
        m = _OTHER_ATTEMPT_RE.fullmatch(key)
    if m is None:
        return key, None
    return m.group(1), m.group(2)


def _attempt_order(attempt: str | None) -> tuple[int, int, str]:
    if attempt is None:
        return (0, 0, "")
    if attempt.isdigit():
        return (1, int(attempt), "")
    return (2, 0, attempt)


def _skip_entry(name: str) -> bool:
    # Hidden files include Hadoop's .<name>.crc checksums that local-FS writes leave beside logs.
    return name.startswith(".") or name.endswith(".crc")


@dataclass(slots=True)
class _Candidate:
    path: LogPath
    key: str
    kind: str  # "file" | "rolling" | "legacy"
    app: str = ""
    attempt: str | None = None

    def __post_init__(self) -> None:
        self.app, self.attempt = _split_attempt(self.key)


def _list_dir(d: LogPath) -> list[str]:
    return [e.name for e in scandir(d)]


def _rolling_key_from_parts(d: LogPath) -> str | None:
    try:
        names = sorted(_list_dir(d))
    except OSError:
        return None
    for name in names:
        m = _EVENTS_RE.fullmatch(name)
        if m:
            return _split_name(m.group(2))[0]
    return None


def _is_legacy_dir(d: LogPath) -> bool:
    try:
        return any(_LEGACY_EVENTS_RE.fullmatch(name) for name in _list_dir(d))
    except OSError:
        return False


def _dir_candidate(d: LogPath) -> _Candidate | None:
    name = d.name
    if name.startswith(_ROLLING_PREFIX):
        return _Candidate(d, name[len(_ROLLING_PREFIX) :], "rolling")
    if _is_legacy_dir(d):
        return _Candidate(d, name, "legacy")
    key = _rolling_key_from_parts(d)
    if key is not None:  # a rolling directory that someone renamed
        return _Candidate(d, key, "rolling")
    return None


def _file_candidate(p: LogPath) -> _Candidate:
    return _Candidate(p, _split_name(p.name)[0], "file")


def _looks_like_log(p: LogPath) -> bool:
    """Cheap content check for directory scans. Plain text must mention an "Event" field near
    its start (every Spark event has one), so READMEs, manifests and other JSON are not taken
    for logs; compressed data is recognised by its magic bytes."""
    try:
        with open_input(p) as f:
            head = f.read(HEAD_SIZE)
    except OSError:
        return False
    codec = sniff_codec(head) if head else None
    if codec == "plain":
        return b'"Event"' in head
    return codec is not None


def _scan(d: LogPath, *, sniff: bool) -> list[_Candidate]:
    """Event logs directly inside ``d``. ``sniff`` checks file contents (slower, but a directory
    of logs often holds READMEs and such); without it, names decide."""
    return list(_iter_scan(d, sniff=sniff))


def _holds_logs(d: LogPath) -> bool:
    """Whether ``d`` holds an event log, by content, stopping at the first: worth suggesting
    to a user whose path inside it does not exist (``/`` holds files but no logs)."""
    try:
        return next(_iter_scan(d, sniff=True), None) is not None
    except PerfmodelError:
        return False


def _iter_scan(d: LogPath, *, sniff: bool) -> Iterator[_Candidate]:
    try:
        entries = scandir(d)
    except OSError as e:
        raise NotAnEventLogError(f"Cannot list {d}: {e.strerror or e}.") from None
    for entry in entries:
        if _skip_entry(entry.name):
            continue
        p = entry.path
        if entry.is_dir():
            cand = _dir_candidate(p) if sniff else None
            if cand is None and entry.name.startswith(_ROLLING_PREFIX):
                cand = _Candidate(p, entry.name[len(_ROLLING_PREFIX) :], "rolling")
            if cand is not None:
                yield cand
        elif not sniff or _looks_like_log(p):
            yield _file_candidate(p)


# ---------------------------------------------------------------------------------------------
# Resolution


def resolve_event_log(path: str | LogPath, attempt: str | None = None) -> EventLogSource:
    """Turn what the user typed into the list of files of one application attempt.

    ``attempt`` picks an attempt of a multi-attempt application (default: the latest). Pointing
    at one part of a rolling directory (or its ``appstatus`` marker) means the whole directory:
    a lone later part lacks the events that start the application, so reading it alone would
    only produce a misleading diagnosis. ``path`` may be remote (``s3://…``; see
    `perfmodel.profile.sources`): resolution walks the store the same way.
    """
    given = log_path(path, max_decompressed_bytes=DEFAULT_MAX_DECOMPRESSED)
    p = given.expanduser()
    if attempt is not None:
        attempt = str(attempt)
    if p.is_file():
        parent = p.parent
        in_rolling = parent.name.startswith(_ROLLING_PREFIX) and (
            _EVENTS_RE.fullmatch(p.name) is not None or p.name.startswith(_APPSTATUS_PREFIX)
        )
        in_legacy = _LEGACY_EVENTS_RE.fullmatch(p.name) is not None and _is_legacy_dir(parent)
        if in_rolling or in_legacy:
            cand = _dir_candidate(parent)
            assert cand is not None
            return _resolve_with_siblings(given, cand, attempt)
        return _resolve_with_siblings(given, _file_candidate(p), attempt)
    if p.is_dir():
        cand = _dir_candidate(p)
        if cand is not None:
            return _resolve_with_siblings(given, cand, attempt)
        cands = _scan(p, sniff=True)
        if not cands:
            if not isinstance(p, RemotePath) and has_bundle_parts(p):
                raise NotAnEventLogError(
                    f"{given} holds a perfmodel bundle's parts but no manifest.json: "
                    "record the run again, or point perfmodel at its event log"
                )
            raise NotAnEventLogError(
                f"{given} is a directory without Spark event logs in it (no JSON-lines or "
                "compressed event-log files, no eventlog_v2_* directories)."
            )
        return _select(given, cands, attempt, where=f"{given}")
    if p.exists():
        raise NotAnEventLogError(f"{given} is neither a file nor a directory.")
    return _resolve_prefix(given, p, attempt)


def _resolve_prefix(given: LogPath, p: LogPath, attempt: str | None) -> EventLogSource:
    """``logs/application_1_0001`` when only ``logs/application_1_0001_<n>`` exist."""
    parent = p.parent
    if not parent.is_dir():
        raise EventLogNotFoundError(
            f"No event log at {given}: the directory {parent} does not exist either."
        )
    key = _split_name(p.name)[0]
    cands = _scan(parent, sniff=False)
    matching = [c for c in cands if c.app == key or c.key == key]
    if matching:
        return _select(given, matching, attempt, where=f"{parent}")
    names = [c.path.name for c in cands]
    close = difflib.get_close_matches(p.name, names, n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(str(parent / n) for n in close)}?" if close else ""
    if not close and names and _holds_logs(parent):
        hint = f" {parent} holds event logs: point perfmodel at it to list them."
    raise EventLogNotFoundError(f"No event log at {given}: it does not exist.{hint}")


def _resolve_with_siblings(given: LogPath, cand: _Candidate, attempt: str | None) -> EventLogSource:
    """The user named one log; still look beside it for other attempts of the same app
    (unless the location says not to: a fleet run over a bucket prefix would list the whole
    prefix again for every log)."""
    if isinstance(given, RemotePath) and not given.siblings and attempt is None:
        return _materialize(given, cand, [])
    siblings = [c for c in _scan(cand.path.parent, sniff=False) if c.app == cand.app]
    if not any(c.path == cand.path for c in siblings):
        siblings.append(cand)
    if attempt is not None and attempt != cand.attempt:
        return _select(given, siblings, attempt, where=f"{cand.path.parent}", named=cand)
    return _materialize(given, cand, _other_attempts(siblings, cand.attempt))


def _other_attempts(cands: Iterable[_Candidate], chosen: str | None) -> list[str]:
    others = {c.attempt for c in cands if c.attempt is not None and c.attempt != chosen}
    return sorted(others, key=_attempt_order)


def _listing(paths: list[LogPath]) -> str:
    shown = [f"  {p}" for p in paths[:_MAX_LISTED]]
    if len(paths) > _MAX_LISTED:
        shown.append(f"  ... and {len(paths) - _MAX_LISTED} more")
    return "\n".join(shown)


def _select(
    given: LogPath,
    cands: list[_Candidate],
    attempt: str | None,
    *,
    where: str,
    named: _Candidate | None = None,
) -> EventLogSource:
    """The log of ``attempt`` (default: the latest) among ``cands``, the logs of one
    application found in ``where``; ``named`` is the log the user pointed at, if one."""
    apps = sorted({c.app for c in cands})
    if len(apps) > 1:
        raise AmbiguousEventLogError(
            f"{given} holds event logs of {len(apps)} applications; point at one of them:\n"
            + _listing([c.path for c in cands])
        )
    by_attempt: dict[str | None, list[_Candidate]] = defaultdict(list)
    for c in cands:
        by_attempt[c.attempt].append(c)
    if attempt is None:
        chosen_attempt = max(by_attempt, key=_attempt_order)
    elif attempt in by_attempt:
        chosen_attempt = attempt
    else:
        known = [a for a in sorted(by_attempt, key=_attempt_order) if a is not None]
        if named is not None:
            raise EventLogNotFoundError(_no_such_attempt(named, attempt, known))
        listed = ", ".join(known) if known else "none (the log carries no attempt id)"
        raise EventLogNotFoundError(
            f"No attempt {attempt} of application {apps[0]} in {where}; attempts found: {listed}."
        )
    chosen = by_attempt[chosen_attempt]
    if len(chosen) > 1:
        raise AmbiguousEventLogError(
            f"{given} holds several event logs for the same application attempt "
            f"({chosen[0].key}); point at one of them:\n" + _listing([c.path for c in chosen])
        )
    return _materialize(given, chosen[0], _other_attempts(cands, chosen_attempt))


def _no_such_attempt(named: _Candidate, attempt: str, known: list[str]) -> str:
    """Why the log a user pointed at has no attempt ``attempt``, naming its application as
    the log does (the file's name is only a guess at it) and the attempts of it that lie
    beside it (``known``)."""
    text = f"{named.path.name} holds no attempt {attempt} of application {_app_label(named)}"
    held = named.attempt or "none (its name carries no attempt id)"
    others = [a for a in known if a != named.attempt]
    text += f"; attempts in it: {held}"
    if others:
        text += f"; other attempts beside it: {', '.join(others)}"
    return text + "."


def _app_label(cand: _Candidate) -> str:
    """The application's id and name from the log's application-start event, else the id
    its file name suggests."""
    if cand.kind != "file":
        return cand.app
    found = _app_start(cand.path)
    if found is None:
        return cand.app
    app_id, name = found
    return f"{app_id} ({name})" if name and name != app_id else app_id


def _app_start(path: LogPath) -> tuple[str, str] | None:
    """(app id, app name) from the application-start event near the start of the log at
    ``path``; None where it is not found there or the log cannot be read (the message that
    asks for it has its answer without)."""
    seen = b""
    try:
        for piece in iter_decompressed(path, max_decompressed_bytes=_APP_START_WITHIN):
            seen += piece
            end = seen.rfind(b"\n") + 1  # whole lines only: a cut one waits for the rest
            for line in seen[:end].splitlines():
                if _APP_START_EVENT.encode() in line:
                    event = json.loads(line)
                    if isinstance(event, dict) and event.get("Event") == _APP_START_EVENT:
                        return _id_and_name(event)
            seen = seen[end:]
    except (PerfmodelError, StreamProblem, OSError, ValueError):
        return None
    return None


def _id_and_name(event: dict[str, object]) -> tuple[str, str] | None:
    app_id, name = event.get("App ID"), event.get("App Name")
    if not isinstance(app_id, str) or not app_id:
        return None
    return app_id, name if isinstance(name, str) else ""


def _materialize(given: LogPath, cand: _Candidate, others: list[str]) -> EventLogSource:
    missing: list[tuple[int, int]] = []
    if cand.kind == "rolling":
        parts, in_progress, missing = _rolling_parts(cand.path)
    elif cand.kind == "legacy":
        parts, in_progress, missing = _legacy_parts(cand.path)
    else:
        in_progress = _split_name(cand.path.name)[1]
        try:
            empty = cand.path.stat().st_size == 0
        except OSError as e:
            raise NotAnEventLogError(f"Cannot read {cand.path}: {e.strerror or e}.") from None
        if empty:
            why = " (Spark has only just started writing it)" if in_progress else ""
            raise NotAnEventLogError(f"{cand.path} is empty{why}; there are no events to read.")
        parts = [cand.path]
    return EventLogSource(
        path=given,
        app_key=cand.key,
        parts=parts,
        attempt=cand.attempt,
        other_attempts=others,
        in_progress=in_progress,
        missing_parts=missing,
    )


def _missing_numbers(numbers: list[int], first: int) -> list[tuple[int, int]]:
    """Runs of part numbers (first, last) absent between ``first`` and the highest present
    (sorted input): as many runs as there are parts at most, however wide the gaps.

    Spark numbers rolling parts from 1 without gaps, so a gap is a part that was lost
    (deleted, not copied); its events are missing from the analysis.
    """
    runs: list[tuple[int, int]] = []
    expected = first
    for n in numbers:
        if n > expected:
            runs.append((expected, n - 1))
        expected = max(expected, n + 1)
    return runs


def _rolling_parts(d: LogPath) -> tuple[list[LogPath], bool, list[tuple[int, int]]]:
    """Parts in numeric order (``events_10`` after ``events_9``), the in-progress flag and
    the numbers missing from the sequence.

    Follows Spark's reader: when compaction has run, reading starts at the newest
    ``*.compact`` part, which replaces all parts before it. Without an ``appstatus`` marker the
    state is unknown; it is taken as complete (the events themselves tell the rest).
    """
    events: list[tuple[int, str, LogPath]] = []
    statuses: list[str] = []
    try:
        entries = scandir(d)
    except OSError as e:
        raise NotAnEventLogError(f"Cannot list {d}: {e.strerror or e}.") from None
    for entry in entries:
        name = entry.name
        if _skip_entry(name):
            continue
        m = _EVENTS_RE.fullmatch(name)
        if m is not None and entry.is_file():
            events.append((int(m.group(1)), name, entry.path))
        elif name.startswith(_APPSTATUS_PREFIX):
            statuses.append(name)
    if not events:
        raise NotAnEventLogError(
            f"{d} is a rolling event-log directory without any events_<n>_* part "
            "(Spark may not have written the first part yet)."
        )
    events.sort()
    start = max(
        (i for i, (_, name, _) in enumerate(events) if name.endswith(_COMPACT)),
        default=0,
    )
    kept = events[start:]
    parts = [p for _, _, p in kept]
    # After compaction, the compact part stands for all numbers up to its own.
    missing = _missing_numbers([n for n, _, _ in kept], kept[0][0] if start else 1)
    return parts, any(s.endswith(_IN_PROGRESS) for s in statuses), missing


def _legacy_parts(d: LogPath) -> tuple[list[LogPath], bool, list[tuple[int, int]]]:
    """Spark 1.0-1.2 log directories: ``EVENT_LOG_<n>`` files, done once APPLICATION_COMPLETE
    exists. The codec (named by a ``COMPRESSION_CODEC_*`` marker) is recognised from the data."""
    events: list[tuple[int, LogPath]] = []
    for name in _list_dir(d):
        m = _LEGACY_EVENTS_RE.fullmatch(name)
        if m is not None:
            events.append((int(m.group(1)), d / name))
    events.sort()
    missing = _missing_numbers([n for n, _ in events], events[0][0] if events else 1)
    return [p for _, p in events], not (d / _LEGACY_COMPLETE).exists(), missing
