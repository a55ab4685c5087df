"""A Spark History Server as a log source, through its REST API.

``GET /api/v1/applications/<id>[/<attempt>]/logs`` answers with a zip of the
application's event-log files as the server stores them (a single file, or the parts of a
rolling ``eventlog_v2_*`` directory; without an attempt, every attempt's). The zip is
streamed to an anonymous temporary file in pieces (a zip's directory is at its end, and
the server offers no byte ranges), then read as a `ZipStore`: path resolution, the codecs,
the decompression cap and the damage accounting then run exactly as on a directory of
logs. Nothing is extracted to disk, so an entry name cannot escape anywhere; names that
try (absolute, ``..``) are refused all the same, and the entries' declared sizes are held
to the decompression cap before any is read (`zipfile` never inflates past a declared size).

Every request has a timeout and is retried with exponential backoff on connection errors,
timeouts and 5xx/429 answers; 401, 403 and 404 are answered at once with an error that
says what to do. Connecting has its own, shorter timeout, and is not retried when it runs
out: a server that does not answer a connection in that time is a wrong address or a
firewall far more often than a blip, and four more waits would only make the user wait.
TLS is verified (the system's CAs, or ``--ca-bundle``). Credentials for a server behind
basic authentication come from ``~/.netrc`` (``NETRC``), never from the URL.
"""

from __future__ import annotations

import base64
import functools
import http.client
import json
import netrc
import os
import socket
import ssl
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import IO, Any, BinaryIO, cast

from perfmodel.errors import DecompressionLimitError, EventLogNotFoundError, NotAnEventLogError
from perfmodel.profile.sources.stores import (
    Entry,
    RemotePath,
    SourceOptions,
    StoreAccessError,
    StoreUnavailableError,
)
from perfmodel.profile.sources.uri import (
    Location,
    SourceError,
    app_url,
    check_app_id,
    check_history_server,
    parse_history_url,
    scrub,
)

DEFAULT_RETRIES = 3
"""Retries after the first try (so four requests at most), 0.5 s, 1 s, 2 s apart."""
BACKOFF_S = 0.5
VANISHED_GRACE_S = 120.0
"""How long a followed application may be missing from the server (404) before that is an
error: a few of the server's scans (`spark.history.fs.update.interval`, 10 s by default)."""
DOWNLOAD_PIECE = 1024 * 1024
MAX_ZIP_ENTRIES = 100_000


class HistoryServerError(StoreUnavailableError):
    """The History Server could not be reached or kept failing (timeouts, 5xx)."""


@dataclass(frozen=True, slots=True)
class HistoryApp:
    """One application attempt as the History Server lists it."""

    app_id: str
    attempt: str | None
    name: str
    completed: bool
    last_updated_ms: int
    """When the server last saw the attempt's log change (epoch ms): what says a fleet run
    must analyse it again."""


# ---------------------------------------------------------------------------------------------
# HTTP


@dataclass(slots=True)
class HistoryClient:
    """Requests to one History Server, with timeouts, retries and clear errors."""

    base: str
    options: SourceOptions
    retries: int = DEFAULT_RETRIES
    sleep: Callable[[float], None] = time.sleep

    def __post_init__(self) -> None:
        self.base = self.base.rstrip("/")
        check_history_server(self.base)

    @property
    def shown(self) -> str:
        return scrub(self.base)

    def _context(self) -> ssl.SSLContext | None:
        if not self.base.lower().startswith("https://"):
            return None
        try:
            return ssl.create_default_context(cafile=self.options.ca_bundle)
        except (OSError, ssl.SSLError) as e:
            raise SourceError(
                f"--ca-bundle {self.options.ca_bundle}: cannot load it ({e})"
            ) from None

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "*/*", "User-Agent": "perfmodel"}
        host = urllib.parse.urlsplit(self.base).hostname or ""
        try:
            auth = netrc.netrc(os.environ.get("NETRC")).authenticators(host)
        except (OSError, netrc.NetrcParseError):
            auth = None
        if auth is not None and auth[2] is not None:
            token = base64.b64encode(f"{auth[0]}:{auth[2]}".encode()).decode()
            headers["Authorization"] = f"Basic {token}"
        return headers

    def request(self, path: str, what: str, consume: Callable[[Any], Any]) -> Any:
        """``consume(response)`` for ``GET base + path``, retried on transient failures
        (a failure inside ``consume``, such as the server going away mid-body, included)."""
        url = self.base + path
        connect_s = min(self.options.connect_timeout_s, self.options.request_timeout_s)
        opener = urllib.request.build_opener(
            _HTTPHandler(connect_s), _HTTPSHandler(connect_s, self._context())
        )
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self.sleep(BACKOFF_S * 2 ** (attempt - 1))
            req = urllib.request.Request(url, headers=self._headers())
            try:
                with opener.open(req, timeout=self.options.request_timeout_s) as resp:
                    return consume(resp)
            except urllib.error.HTTPError as e:
                if e.code in (401, 403, 404):
                    raise self._refused(e.code, what) from None
                if e.code < 500 and e.code != 429:
                    raise HistoryServerError(
                        f"{self.shown}: {what}: the server answered HTTP {e.code}"
                    ) from None
                last = f"HTTP {e.code}"
            except ssl.SSLCertVerificationError as e:
                raise self._untrusted(e) from None
            except (urllib.error.URLError, http.client.HTTPException, OSError) as e:
                reason = getattr(e, "reason", e)
                if isinstance(reason, ssl.SSLCertVerificationError):
                    raise self._untrusted(reason) from None
                if isinstance(reason, _ConnectTimeout):
                    raise HistoryServerError(
                        f"{self.shown}: {what}: no connection within {connect_s:g} s (is the "
                        "address right, and the server up and reachable from here?)"
                    ) from None
                last = _describe_network(reason)
        raise HistoryServerError(
            f"{self.shown}: {what}: no answer after {self.retries + 1} tries ({last})"
        )

    def _untrusted(self, e: ssl.SSLCertVerificationError) -> StoreAccessError:
        return StoreAccessError(
            f"{self.shown}: the server's TLS certificate is not trusted ({e.verify_message}); "
            "give the CA that signed it with --ca-bundle"
        )

    def _refused(self, code: int, what: str) -> Exception:
        if code == 404:
            return EventLogNotFoundError(f"{self.shown}: {what}: not found (HTTP 404)")
        if code == 401:
            return StoreAccessError(
                f"{self.shown}: {what}: the server asks for credentials (HTTP 401); perfmodel "
                "sends those of ~/.netrc for the host, if any"
            )
        return StoreAccessError(
            f"{self.shown}: {what}: permission denied (HTTP 403); the server's ACLs "
            "(spark.history.ui.acls.enable) do not let this user read it"
        )

    def get_json(self, path: str, what: str) -> Any:
        def read(resp: Any) -> Any:
            body = resp.read()
            try:
                return json.loads(body)
            except ValueError:
                said = WEB_PAGE if _is_web_page(body) else "the answer is not JSON"
                raise HistoryServerError(f"{self.shown}: {what}: {said}") from None

        try:
            return self.request(path, what, read)
        except ValueError:
            raise HistoryServerError(f"{self.shown}: {what}: the answer is not JSON") from None

    def applications(self, since: datetime | None = None) -> list[HistoryApp]:
        """Every application attempt the server lists (updated at or after ``since``)."""
        query = "" if since is None else "?minEndDate=" + urllib.parse.quote(_shs_date(since))
        apps = self.get_json("/api/v1/applications" + query, "listing applications")
        out: list[HistoryApp] = []
        if not isinstance(apps, list):
            raise HistoryServerError(f"{self.shown}: the application listing is not a list")
        for app in apps:
            attempts = app.get("attempts") or [{}]
            for a in attempts:
                attempt_id = a.get("attemptId")
                out.append(
                    HistoryApp(
                        app_id=str(app.get("id", "")),
                        attempt=str(attempt_id) if attempt_id is not None else None,
                        name=str(app.get("name", "")),
                        completed=bool(a.get("completed", False)),
                        last_updated_ms=int(a.get("lastUpdatedEpoch") or 0),
                    )
                )
        if since is not None:  # a running attempt has no end date: minEndDate leaves it out
            running = self.get_json(
                "/api/v1/applications?status=running", "listing running applications"
            )
            for app in running if isinstance(running, list) else []:
                for a in app.get("attempts") or [{}]:
                    attempt_id = a.get("attemptId")
                    out.append(
                        HistoryApp(
                            str(app.get("id", "")),
                            str(attempt_id) if attempt_id is not None else None,
                            str(app.get("name", "")),
                            False,
                            int(a.get("lastUpdatedEpoch") or 0),
                        )
                    )
        return out

    def application(self, app_id: str) -> dict[str, Any]:
        check_app_id(app_id, self.shown)
        info = self.get_json(f"/api/v1/applications/{app_id}", f"application {app_id}")
        if not isinstance(info, dict):
            raise HistoryServerError(f"{self.shown}: application {app_id}: unexpected answer")
        return info

    def download_logs(self, app_id: str, attempt: str | None, cap: int) -> BinaryIO:
        """The application's zip of event-log files in an anonymous temporary file."""
        check_app_id(app_id, self.shown)
        if attempt is not None:
            check_app_id(attempt, self.shown)
        path = f"/api/v1/applications/{app_id}" + (f"/{attempt}" if attempt else "") + "/logs"
        what = f"event log of application {app_id}" + (f" attempt {attempt}" if attempt else "")

        def spool(resp: Any) -> BinaryIO:
            expected = resp.headers.get("Content-Length")
            f = cast(BinaryIO, tempfile.TemporaryFile(prefix="perfmodel-shs-"))
            try:
                n = 0
                while piece := resp.read(DOWNLOAD_PIECE):
                    n += len(piece)
                    if n > cap:
                        raise DecompressionLimitError(
                            f"{self.shown}: {what}: the zip is larger than the decompression "
                            "cap; raise --max-decompressed-bytes if the log is genuine",
                            file=what,
                            limit=cap,
                        )
                    f.write(piece)
                if expected is not None and n != int(expected):
                    raise http.client.IncompleteRead(b"", int(expected) - n)
                f.seek(0)
                return f
            except BaseException:
                f.close()
                raise

        return self.request(path, what, spool)


def _shs_date(when: datetime) -> str:
    """The date format the History Server's ``minDate``/``minEndDate`` take."""
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}GMT"


class _ConnectTimeout(OSError):
    """Connecting (TCP and TLS) took longer than the connect timeout."""


class _HTTPConnection(http.client.HTTPConnection):
    """A connection whose connecting is held to ``connect_timeout``; each read then waits up
    to the request timeout (the server may take a while to build a big application's zip)."""

    def __init__(self, *args: Any, connect_timeout: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.connect_timeout = connect_timeout

    def connect(self) -> None:
        self.sock = _connected(super().connect, self)


class _HTTPSConnection(http.client.HTTPSConnection):
    """`_HTTPConnection` over TLS (the handshake counts as connecting)."""

    def __init__(self, *args: Any, connect_timeout: float, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.connect_timeout = connect_timeout

    def connect(self) -> None:
        self.sock = _connected(super().connect, self)


def _connected(
    connect: Callable[[], None], conn: _HTTPConnection | _HTTPSConnection
) -> socket.socket:
    """``connect()`` under the connection's connect timeout, its socket then set to wait up
    to the request timeout."""
    read_timeout = conn.timeout
    conn.timeout = conn.connect_timeout
    try:
        connect()
    except TimeoutError:
        raise _ConnectTimeout("connecting timed out") from None
    finally:
        conn.timeout = read_timeout
    sock: socket.socket = conn.sock
    sock.settimeout(read_timeout)
    return sock


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, connect_timeout: float) -> None:
        super().__init__()
        self.connect_timeout = connect_timeout

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        conn = functools.partial(_HTTPConnection, connect_timeout=self.connect_timeout)
        return self.do_open(conn, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, connect_timeout: float, context: ssl.SSLContext | None) -> None:
        super().__init__(context=context)
        self.connect_timeout = connect_timeout
        self.tls_context = context

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        conn = functools.partial(_HTTPSConnection, connect_timeout=self.connect_timeout)
        return self.do_open(conn, req, context=self.tls_context)


WEB_PAGE = (
    "the server answered with a web page, not the History Server's REST API (a History "
    "Server that is still starting serves its pages first: try again in a few seconds; "
    "otherwise check the address)"
)
"""What a web page where the REST API should answer means: a History Server still starting
(it serves its UI a few seconds before its API), or something else at that address (a
proxy's sign-in page)."""


def _is_web_page(head: bytes) -> bool:
    return head.lstrip()[:1] == b"<"


def _describe_network(reason: object) -> str:
    if isinstance(reason, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(reason, http.client.IncompleteRead):
        return "the answer was cut off"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return type(reason).__name__ if not str(reason) else scrub(str(reason))[:160]


# ---------------------------------------------------------------------------------------------
# The zip as a store


class ZipStore:
    """A downloaded zip of event-log files, listed and read like a directory."""

    def __init__(self, spool: BinaryIO, shown: str, cap: int) -> None:
        self._spool = spool
        self.shown = shown.rstrip("/")
        try:
            self._zip = zipfile.ZipFile(spool)
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as e:
            try:
                spool.seek(0)
                head = spool.read(512)
            except OSError:
                head = b""
            if _is_web_page(head):
                raise HistoryServerError(f"{self.shown}: {WEB_PAGE}") from None
            raise NotAnEventLogError(
                f"{self.shown}: the History Server's zip of the event log is damaged or cut "
                f"off ({e}); nothing could be read from it"
            ) from None
        if len(infos) > MAX_ZIP_ENTRIES:
            raise NotAnEventLogError(f"{self.shown}: the zip holds {len(infos):,} entries")
        declared = sum(i.file_size for i in infos)
        if declared > cap:
            raise DecompressionLimitError(
                f"{self.shown}: the zip's files declare {declared:,} bytes, over the "
                "decompression cap; raise --max-decompressed-bytes if the log is genuine",
                file=self.shown,
                limit=cap,
            )
        self._files: dict[str, zipfile.ZipInfo] = {}
        self._dirs: dict[str, dict[str, bool]] = {"": {}}
        for info in infos:
            name = info.filename
            if info.is_dir():
                continue
            parts = name.split("/")
            if (
                name.startswith("/")
                or "\\" in name
                or "\x00" in name
                or ".." in parts
                or "" in parts
            ):
                raise NotAnEventLogError(
                    f"{self.shown}: the zip holds an entry with an unsafe name ({name[:80]!r}); "
                    "it is not what a History Server writes"
                )
            self._files[name] = info
            for depth in range(len(parts)):
                parent = "/".join(parts[:depth])
                self._dirs.setdefault(parent, {})[parts[depth]] = depth < len(parts) - 1

    def root(self) -> RemotePath:
        return RemotePath(self, Location("zip", "", ""))

    def describe(self, loc: Location) -> str:
        return f"{self.shown}/{loc.key}" if loc.key else self.shown

    def info(self, loc: Location) -> Entry | None:
        key = loc.key.strip("/")
        if key in self._dirs:
            return Entry(loc.name, True)
        zi = self._files.get(key)
        if zi is None:
            return None
        return Entry(loc.name, False, zi.file_size, _zip_mtime_ns(zi))

    def iter_dir(self, loc: Location) -> Iterator[Entry]:
        key = loc.key.strip("/")
        children = self._dirs.get(key)
        if children is None:
            raise EventLogNotFoundError(f"No such directory in the zip: {self.describe(loc)}")
        for name, is_dir in sorted(children.items()):
            yield self.info(loc.child(name)) or Entry(name, is_dir)

    def open(self, loc: Location, offset: int = 0) -> BinaryIO:
        zi = self._files.get(loc.key.strip("/"))
        if zi is None:
            raise EventLogNotFoundError(f"No such file in the zip: {self.describe(loc)}")
        return cast(BinaryIO, _ZipEntryReader(self._zip.open(zi), offset, self.describe(loc)))


class _ZipEntryReader:
    """An entry's inflated bytes; a CRC or size mismatch (a damaged zip) is an `OSError`, as
    a failing read of a file would be, so the log reader counts it as damage."""

    def __init__(self, f: IO[bytes], offset: int, shown: str) -> None:
        self._f = f
        self._shown = shown
        if offset:
            self.seek(offset)

    def read(self, n: int = -1) -> bytes:
        try:
            return self._f.read(n)
        except (zipfile.BadZipFile, EOFError, OSError) as e:
            raise OSError(f"{self._shown}: the zip entry is damaged ({e})") from None

    def seek(self, offset: int, whence: int = 0) -> int:
        try:
            return self._f.seek(offset, whence)
        except (zipfile.BadZipFile, EOFError, OSError) as e:
            raise OSError(f"{self._shown}: the zip entry is damaged ({e})") from None

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> _ZipEntryReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _zip_mtime_ns(zi: zipfile.ZipInfo) -> int:
    try:
        return int(datetime(*zi.date_time).timestamp() * 1e9)
    except (ValueError, OverflowError):
        return 0


def open_history_log(
    text: str, options: SourceOptions, cap: int, *, attempt: str | None = None
) -> RemotePath:
    """The event log of the application at ``text`` (a History Server application address),
    downloaded once and readable as a directory (see module docstring)."""
    base, app_id, url_attempt = parse_history_url(text)
    return fetch_app_log(base, app_id, url_attempt or attempt, options, cap)


def fetch_app_log(
    base: str, app_id: str, attempt: str | None, options: SourceOptions, cap: int
) -> RemotePath:
    client = HistoryClient(base, options)
    spool = client.download_logs(app_id, attempt, cap)
    store = ZipStore(spool, app_url(client.shown, app_id, attempt), cap)
    return store.root()


class LiveHistoryStore:
    """A History Server application that may still be running, for following it.

    The server offers no byte ranges, so a poll that finds the application updated
    (its ``lastUpdated`` time in ``/api/v1/applications/<id>``, one small request)
    downloads the zip again; the follower then inflates each entry only up to where it had
    read and decodes just the appended bytes. Between updates nothing is downloaded.
    """

    def __init__(
        self, client: HistoryClient, app_id: str, attempt: str | None, cap: int, min_gap_s: float
    ) -> None:
        self.client = client
        self.app_id = app_id
        self.attempt = attempt
        self.cap = cap
        self.min_gap_s = min_gap_s
        self.shown = app_url(client.shown, app_id, attempt)
        self._updated: int | None = None
        self._checked = 0.0
        self._seen = 0.0
        self._zip: ZipStore | None = None
        self.downloads = 0
        self.refresh(force=True)

    def _last_updated(self) -> int:
        info = self.client.application(self.app_id)
        stamps = [
            int(a.get("lastUpdatedEpoch") or 0)
            for a in info.get("attempts") or []
            if self.attempt is None or str(a.get("attemptId")) == self.attempt
        ]
        return max(stamps, default=0)

    def refresh(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._checked < self.min_gap_s:
            return
        self._checked = now
        try:
            updated = self._last_updated()
            if self._zip is not None and updated == self._updated:
                self._seen = now
                return
            spool = self.client.download_logs(self.app_id, self.attempt, self.cap)
        except EventLogNotFoundError:
            # When an application ends, the server's next scan finds its `.inprogress` log
            # gone and drops the application before it lists it again under the final
            # name: a 404 for a while. Keep what was read, and ask again next poll.
            if self._zip is None or now - self._seen > VANISHED_GRACE_S:
                raise
            return
        self._zip = ZipStore(spool, self.shown, self.cap)
        self._updated = updated
        self._seen = now
        self.downloads += 1

    @property
    def current(self) -> ZipStore:
        assert self._zip is not None
        return self._zip

    def root(self) -> RemotePath:
        return RemotePath(self, Location("zip", "", ""))

    def describe(self, loc: Location) -> str:
        return self.current.describe(loc)

    def info(self, loc: Location) -> Entry | None:
        return self.current.info(loc)

    def iter_dir(self, loc: Location) -> Iterator[Entry]:
        return self.current.iter_dir(loc)

    def open(self, loc: Location, offset: int = 0) -> BinaryIO:
        return self.current.open(loc, offset)


def live_history_log(
    text: str,
    options: SourceOptions,
    cap: int,
    min_gap_s: float,
    *,
    history_server: str | None = None,
    attempt: str | None = None,
) -> RemotePath:
    """A History Server application (an address, or ``history_server`` and an app id) as a
    location that `perfmodel.profile.sources.follow` can follow while it runs."""
    if history_server is not None:
        base, app_id = history_server, text
        check_app_id(app_id, scrub(base))
    else:
        base, app_id, url_attempt = parse_history_url(text)
        attempt = url_attempt or attempt
    client = HistoryClient(base, options)
    return LiveHistoryStore(client, app_id, attempt, cap, min_gap_s).root()


__all__ = [
    "HistoryApp",
    "HistoryClient",
    "HistoryServerError",
    "LiveHistoryStore",
    "ZipStore",
    "fetch_app_log",
    "live_history_log",
    "open_history_log",
]
