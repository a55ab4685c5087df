"""The one filesystem layer: stat, list and stream a log's bytes wherever they live.

Local paths stay `pathlib.Path` objects and go to the operating system. Remote locations
become `RemotePath` objects, which offer the few `Path` operations that resolving an
event log needs (``name``, ``parent``, ``/``, ``stat``, ``is_file``, ``is_dir``,
``exists``) on top of a `Store`; reading them streams through `open_input`.

Object stores, GCS, ABFS and HDFS go through ``pyarrow.fs`` (already a dependency, and it
speaks all four natively: no extra client library per cloud). Credentials come from each
platform's standard chain, which ``pyarrow.fs`` resolves itself (AWS: environment, profile
files, instance role; GCS: application-default credentials; Azure: DefaultAzureCredential;
HDFS: the Hadoop configuration and Kerberos ticket cache); perfmodel never reads, asks for
or prints them. A custom S3 endpoint comes from ``AWS_ENDPOINT_URL_S3`` /
``AWS_ENDPOINT_URL`` or `SourceOptions.endpoint_url`.

Reads are streamed in ranged requests as the decoder asks for bytes: a log is never
downloaded whole before it is decoded, and the decompression cap applies as on disk.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import socket
import stat as stat_mod
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any, BinaryIO, Protocol, cast
from urllib.parse import urlsplit

from perfmodel.atomic import describe_kind
from perfmodel.errors import EventLogNotFoundError, PerfmodelError
from perfmodel.extras import require_extra
from perfmodel.profile.sources.uri import (
    Location,
    SourceError,
    scrub,
)


class StoreAccessError(PerfmodelError):
    """A store refused access: missing or rejected credentials, or no permission."""


class StoreUnavailableError(PerfmodelError):
    """A store could not be reached, or its client is not available on this machine."""


REMOTE_READ_SIZE = 8 * 1024 * 1024
"""Bytes asked of a remote store per request: each request costs a round trip, so fewer,
larger ranged reads (measured on the loopback S3 server: 8 MiB reads ran the log at local
speed, 1 MiB reads did not)."""

DEFAULT_CONNECT_TIMEOUT_S = 10.0
DEFAULT_REQUEST_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class SourceOptions:
    """How to reach remote stores; everything else comes from the platform's defaults."""

    endpoint_url: str | None = None
    """S3 endpoint (MinIO, Ceph, a test server); default ``AWS_ENDPOINT_URL_S3`` or
    ``AWS_ENDPOINT_URL``, else AWS itself."""
    ca_bundle: str | None = None
    """CA certificates (PEM) to verify TLS servers with, instead of the system's."""
    connect_timeout_s: float = DEFAULT_CONNECT_TIMEOUT_S
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S

    def s3_endpoint(self) -> str | None:
        return (
            self.endpoint_url
            or os.environ.get("AWS_ENDPOINT_URL_S3")
            or os.environ.get("AWS_ENDPOINT_URL")
            or None
        )

    def resolved(self) -> SourceOptions:
        """These options with the S3 endpoint the environment names written in, so that
        worker processes (a fleet run's) reach the endpoint the command was given."""
        return replace(self, endpoint_url=self.s3_endpoint())


@dataclass(frozen=True, slots=True)
class Entry:
    """One listed or stat'ed object: its name inside its parent, kind, size and mtime."""

    name: str
    is_dir: bool
    size: int = 0
    mtime_ns: int = 0


class Store(Protocol):
    """What a remote location's bytes are reached through (one bucket, container or host)."""

    def describe(self, loc: Location) -> str:
        """``loc`` as shown in messages (scrubbed)."""
        ...

    def info(self, loc: Location) -> Entry | None:
        """The object or directory at ``loc``; None when nothing is there."""
        ...

    def iter_dir(self, loc: Location) -> Iterator[Entry]:
        """The entries directly inside ``loc`` (one level, as the store lists them)."""
        ...

    def open(self, loc: Location, offset: int = 0) -> BinaryIO:
        """A stream of ``loc``'s bytes from ``offset`` on, read as it is consumed."""
        ...


# ---------------------------------------------------------------------------------------------
# Remote paths


@dataclass(frozen=True, slots=True)
class RemoteStat:
    """The part of `os.stat_result` that log resolution reads."""

    st_size: int
    st_mtime_ns: int
    st_mode: int

    @property
    def st_mtime(self) -> float:
        return self.st_mtime_ns / 1e9


@dataclass(frozen=True, slots=True, eq=False)
class RemotePath:
    """A location in a `Store`, with the `pathlib.Path` operations log resolution uses."""

    store: Store = field(repr=False)
    loc: Location
    siblings: bool = True
    """Whether resolving this log looks beside it for other attempts of its application
    (a listing of its whole prefix; a fleet run, which names every log itself, skips it)."""

    def __str__(self) -> str:
        return self.store.describe(self.loc)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RemotePath) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __lt__(self, other: RemotePath) -> bool:
        return str(self) < str(other)

    def __truediv__(self, name: str) -> RemotePath:
        return RemotePath(self.store, self.loc.child(name))

    @property
    def name(self) -> str:
        return self.loc.name

    @property
    def parent(self) -> RemotePath:
        return RemotePath(self.store, self.loc.parent)

    def expanduser(self) -> RemotePath:
        return self

    def resolve(self) -> RemotePath:
        return self

    def entry(self) -> Entry | None:
        return self.store.info(self.loc)

    def stat(self) -> RemoteStat:
        e = self.entry()
        if e is None:
            raise EventLogNotFoundError(f"No such object: {self}")
        mode = stat_mod.S_IFDIR if e.is_dir else stat_mod.S_IFREG
        return RemoteStat(e.size, e.mtime_ns, mode)

    def is_file(self) -> bool:
        e = self.entry()
        return e is not None and not e.is_dir

    def is_dir(self) -> bool:
        e = self.entry()
        return e is not None and e.is_dir

    def exists(self) -> bool:
        return self.entry() is not None


LogPath = Path | RemotePath
"""A log location: a local path or a remote one."""


@dataclass(slots=True)
class DirItem:
    """One entry of `scandir`, shaped like `os.DirEntry` (``name``, ``is_dir``, ``is_file``)."""

    name: str
    path: LogPath
    _is_dir: bool

    def is_dir(self) -> bool:
        return self._is_dir

    def is_file(self) -> bool:
        return not self._is_dir


def scandir(d: LogPath) -> list[DirItem]:
    """The entries directly inside ``d`` (local or remote), sorted by name.

    Raises `OSError` for a local directory that cannot be listed, a `PerfmodelError` for a
    remote one.
    """
    if isinstance(d, RemotePath):
        items = [DirItem(e.name, d / e.name, e.is_dir) for e in d.store.iter_dir(d.loc)]
    else:
        items = []
        with os.scandir(d) as it:
            for e in it:
                try:
                    is_dir = e.is_dir()
                except OSError:
                    continue
                items.append(DirItem(e.name, d / e.name, is_dir))
    items.sort(key=lambda i: i.name)
    return items


def iter_entries(d: LogPath) -> Iterator[tuple[LogPath, Entry]]:
    """``(path, entry)`` for each entry inside ``d`` as the store lists it, with size and
    mtime (remote listings carry them, so no request per entry)."""
    if isinstance(d, RemotePath):
        for e in d.store.iter_dir(d.loc):
            yield d / e.name, e
        return
    with os.scandir(d) as it:
        for de in it:
            try:
                st = de.stat()
            except OSError:
                continue
            yield d / de.name, Entry(de.name, de.is_dir(), st.st_size, st.st_mtime_ns)


def open_input(path: LogPath | str, offset: int = 0, buffering: int = 1024 * 1024) -> BinaryIO:
    """A binary stream of a log file's bytes from ``offset`` on (streamed, never whole)."""
    if isinstance(path, RemotePath):
        return path.store.open(path.loc, offset)
    # Opened without blocking and checked before a byte is read: a FIFO named like a log
    # part would wait for a writer forever, a device (/dev/zero) would stream forever.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat_mod.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"{describe_kind(mode)}, not a log file", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    f = open(fd, "rb", buffering=buffering)  # noqa: SIM115 (handed on)
    if offset:
        f.seek(offset)
    return f


def is_remote(path: object) -> bool:
    return isinstance(path, RemotePath)


def store_for(loc: Location, options: SourceOptions) -> Store:
    """The store that serves ``loc``'s bucket, container or cluster (pyarrow.fs: checked
    here, before any reading, so a missing extra is one error naming it)."""
    require_extra("remote", f"reading {loc.scheme}:// locations")
    return ArrowStore(loc, options)


# ---------------------------------------------------------------------------------------------
# Local disk as a store (for code that handles local and remote logs alike, such as following)


class LocalStore:
    """The local filesystem behind the `Store` interface; keys are absolute paths without
    their leading slash (``Location("file", "", "tmp/x")`` is ``/tmp/x``)."""

    @staticmethod
    def location(path: Path) -> Location:
        return Location("file", "", str(path.expanduser().absolute()).lstrip("/"))

    @staticmethod
    def path(loc: Location) -> Path:
        return Path("/" + loc.key)

    def describe(self, loc: Location) -> str:
        return str(self.path(loc))

    def info(self, loc: Location) -> Entry | None:
        try:
            st = self.path(loc).stat()
        except (FileNotFoundError, NotADirectoryError):
            return None
        is_dir = stat_mod.S_ISDIR(st.st_mode)
        return Entry(loc.name, is_dir, 0 if is_dir else st.st_size, st.st_mtime_ns)

    def iter_dir(self, loc: Location) -> Iterator[Entry]:
        for _, e in iter_entries(self.path(loc)):
            yield e

    def open(self, loc: Location, offset: int = 0) -> BinaryIO:
        return open_input(self.path(loc), offset)


def as_store_location(path: LogPath) -> tuple[Store, Location]:
    """``path`` as a store and a location in it (local paths on a `LocalStore`)."""
    if isinstance(path, RemotePath):
        return path.store, path.loc
    return LocalStore(), LocalStore.location(path)


# ---------------------------------------------------------------------------------------------
# pyarrow.fs stores


class ArrowStore:
    """S3, GCS, ABFS or HDFS through ``pyarrow.fs``, created on first use.

    Arrow paths are ``bucket/key`` (S3, GCS), ``container/key`` (ABFS) or ``/key`` (HDFS).
    Errors from the client are mapped to perfmodel errors by `_map_error`, with the
    location scrubbed.
    """

    def __init__(self, root: Location, options: SourceOptions) -> None:
        self.root = root
        self.options = options
        self._fs: Any = None
        self._bucket_exists: bool | None = None

    # -- connection ---------------------------------------------------------------------------

    @property
    def fs(self) -> Any:
        if self._fs is None:
            self._fs = self._connect()
        return self._fs

    def _connect(self) -> Any:
        import pyarrow.fs as pafs

        loc, opts = self.root, self.options
        try:
            if loc.scheme == "s3":
                endpoint = opts.s3_endpoint()
                connect_s = min(opts.connect_timeout_s, opts.request_timeout_s)
                kwargs: dict[str, Any] = {
                    "connect_timeout": connect_s,
                    "request_timeout": opts.request_timeout_s,
                    "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=4),
                }
                if opts.ca_bundle:
                    kwargs["tls_ca_file_path"] = opts.ca_bundle
                if endpoint:
                    scheme, sep, rest = endpoint.partition("://")
                    kwargs["endpoint_override"] = rest.rstrip("/") if sep else endpoint
                    kwargs["scheme"] = scheme if sep else "https"
                    _check_connects(kwargs["endpoint_override"], kwargs["scheme"], loc, connect_s)
                region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
                if region:
                    kwargs["region"] = region
                elif not endpoint:
                    kwargs["region"] = _bucket_region(loc.authority)
                else:
                    kwargs["region"] = "us-east-1"
                return pafs.S3FileSystem(**kwargs)
            if loc.scheme == "gs":
                if not _gcs_credentials_found():
                    raise StoreAccessError(
                        f"{scrub(str(loc))}: no Google Cloud credentials found: perfmodel uses "
                        "Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS naming "
                        "a key file, `gcloud auth application-default login`, or the metadata "
                        "server on Google Cloud)"
                    )
                # Bounded retries: the client otherwise keeps retrying for 15 minutes.
                limit = timedelta(seconds=opts.request_timeout_s)
                return pafs.GcsFileSystem(retry_time_limit=limit)
            if loc.scheme == "abfs":
                container, _, host = loc.authority.partition("@")
                account, _, suffix = host.partition(".")
                if shutil.which("az") is None:
                    # DefaultAzureCredential's last resort runs the Azure CLI through a
                    # shell, which prints "az: not found" under the one error line when it
                    # is not installed; "prod" is the same chain without that one.
                    os.environ.setdefault("AZURE_TOKEN_CREDENTIALS", "prod")
                return pafs.AzureFileSystem(account_name=account)
            if loc.scheme == "hdfs":
                host = loc.host or "default"
                return pafs.HadoopFileSystem(host, loc.port or (0 if host == "default" else 8020))
        except _client_errors() + (RuntimeError,) as e:
            raise StoreUnavailableError(_connect_message(loc, e)) from None
        raise SourceError(f"{loc.scheme}:// has no store")  # parse_location prevents this

    def _arrow_path(self, loc: Location) -> str:
        if loc.scheme == "hdfs":
            return "/" + loc.key
        if loc.scheme == "abfs":
            container = loc.authority.partition("@")[0]
            return f"{container}/{loc.key}".rstrip("/")
        return f"{loc.authority}/{loc.key}".rstrip("/")

    def _bucket_path(self, loc: Location) -> str | None:
        if loc.scheme in ("s3", "gs"):
            return loc.authority
        if loc.scheme == "abfs":
            return loc.authority.partition("@")[0]
        return None

    # -- Store --------------------------------------------------------------------------------

    def describe(self, loc: Location) -> str:
        if loc.scheme == "abfs":
            return scrub(f"abfss://{loc.authority}/{loc.key}")
        return scrub(str(loc))

    def info(self, loc: Location) -> Entry | None:
        import pyarrow.fs as pafs

        try:
            fi = self.fs.get_file_info(self._arrow_path(loc))
        except _client_errors() as e:
            raise _map_error(e, self.describe(loc)) from None
        if fi.type == pafs.FileType.NotFound:
            if (not loc.key and self._bucket_path(loc) is not None) or self._bucket_missing(loc):
                shown = self.describe(Location(loc.scheme, loc.authority, ""))
                raise EventLogNotFoundError(f"No such bucket: {shown}")
            return None
        return _entry(fi, loc.name)

    def _bucket_missing(self, loc: Location) -> bool:
        """Whether ``loc``'s bucket (container) itself is missing; asked once per store, and
        only after something was not found, so a missing bucket is not reported as a
        missing key."""
        if self._bucket_exists is None:
            bucket = self._bucket_path(loc)
            if bucket is None or not loc.key:
                return False
            import pyarrow.fs as pafs

            try:
                found = self.fs.get_file_info(bucket).type != pafs.FileType.NotFound
            except _client_errors():
                found = True  # cannot tell: let the caller's own error speak
            self._bucket_exists = found
        return not self._bucket_exists

    def iter_dir(self, loc: Location) -> Iterator[Entry]:
        import pyarrow.fs as pafs

        selector = pafs.FileSelector(self._arrow_path(loc), recursive=False)
        try:
            infos = self.fs.get_file_info(selector)
        except FileNotFoundError:
            raise EventLogNotFoundError(self._missing(loc)) from None
        except _client_errors() as e:
            raise _map_error(e, self.describe(loc)) from None
        for fi in infos:
            yield _entry(fi, fi.base_name)

    def open(self, loc: Location, offset: int = 0) -> BinaryIO:
        try:
            f = self.fs.open_input_file(self._arrow_path(loc))
            if offset:
                f.seek(offset)
        except FileNotFoundError:
            raise EventLogNotFoundError(self._missing(loc)) from None
        except _client_errors() as e:
            raise _map_error(e, self.describe(loc)) from None
        return cast(BinaryIO, _ArrowReader(f, self.describe(loc)))

    def _missing(self, loc: Location) -> str:
        """Says whether the bucket or the key is missing (one more request, on failure only)."""
        bucket = self._bucket_path(loc)
        if bucket is not None:
            import pyarrow.fs as pafs

            try:
                missing_bucket = self.fs.get_file_info(bucket).type == pafs.FileType.NotFound
            except _client_errors():
                missing_bucket = False
            if missing_bucket:
                return f"No such bucket: {self.describe(Location(loc.scheme, loc.authority, ''))}"
        return f"No such object: {self.describe(loc)}"


class _ArrowReader:
    """A pyarrow input file as a plain binary stream, reading ahead in large ranged requests
    and turning client errors into perfmodel's (or `OSError`, which the log reader counts as
    a cut-off part once some of it was read)."""

    def __init__(self, f: Any, shown: str) -> None:
        self._f = f
        self._shown = shown
        self._buf = b""
        self._pos = 0

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            chunks = [self._take(len(self._buf) - self._pos)]
            while data := self._fill_raw(REMOTE_READ_SIZE):
                chunks.append(data)
            return b"".join(chunks)
        if self._pos >= len(self._buf):
            if n >= REMOTE_READ_SIZE:
                return self._fill_raw(n)
            self._buf = self._fill_raw(REMOTE_READ_SIZE)
            self._pos = 0
        return self._take(n)

    def _take(self, n: int) -> bytes:
        out = self._buf[self._pos : self._pos + n]
        self._pos += len(out)
        if self._pos >= len(self._buf):
            self._buf, self._pos = b"", 0
        return out

    def _fill_raw(self, n: int) -> bytes:
        try:
            return self._f.read(n)
        except _client_errors() as e:
            raise OSError(str(_map_error(e, self._shown))) from None

    def seek(self, offset: int, whence: int = 0) -> int:
        self._buf, self._pos = b"", 0
        return int(self._f.seek(offset, whence))

    def close(self) -> None:
        self._f.close()

    def __enter__(self) -> _ArrowReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_connects(host_port: str, scheme: str, loc: Location, timeout_s: float) -> None:
    """Raise `StoreUnavailableError` when a custom endpoint does not take a connection within
    ``timeout_s``. The S3 client would try four times (40 s with the default timeout) for an
    address that drops connections, which is a wrong address or a firewall, not a blip; any
    other failure is left to the client, its retries and its own error."""
    # Imported here: urllib.request brings http.client and ssl, start-up that a command on a
    # local log would pay for nothing.
    from urllib.request import getproxies, proxy_bypass

    split = urlsplit(f"{scheme}://{host_port}")
    host = split.hostname or host_port
    if scheme in getproxies() and not proxy_bypass(host):
        return  # the client goes through the proxy: a direct connection proves nothing
    try:
        port = split.port or (443 if scheme == "https" else 80)
    except ValueError:
        return  # the client says what is wrong with it
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except TimeoutError:
        raise StoreUnavailableError(
            f"{scrub(str(loc))}: no connection to the endpoint {scrub(host_port)} within "
            f"{timeout_s:g} s (is the address right, and the store reachable from here?)"
        ) from None
    except OSError:
        return


def _gcs_credentials_found() -> bool:
    """Whether Application Default Credentials have anything to try: a key file that
    GOOGLE_APPLICATION_CREDENTIALS names, gcloud's ADC file, an emulator, or a metadata
    server (whose name resolves only on Google Cloud, or one named by GCE_METADATA_HOST).
    With none, the GCS client retries for its whole time limit before it fails (90 s
    measured), so a user without credentials is told at once instead."""
    env = os.environ
    if any(
        env.get(name)
        for name in (
            "GOOGLE_APPLICATION_CREDENTIALS",
            "CLOUD_STORAGE_EMULATOR_ENDPOINT",
            "GCE_METADATA_HOST",
            "GCE_METADATA_ROOT",
        )
    ):
        return True
    config = env.get("CLOUDSDK_CONFIG") or os.path.join(
        os.path.expanduser("~"), ".config", "gcloud"
    )
    adc = env.get("GOOGLE_GCLOUD_ADC_PATH_OVERRIDE") or os.path.join(
        config, "application_default_credentials.json"
    )
    if os.path.isfile(adc):
        return True
    try:
        socket.getaddrinfo("metadata.google.internal", 80)
    except OSError:
        return False
    return True


def _client_errors() -> tuple[type[Exception], ...]:
    """What the ``pyarrow.fs`` clients raise: `OSError` mostly, but a plain
    ``ArrowException`` for some failures (the Azure SDK failing to get a token), which must
    become the same one-line error, not a traceback."""
    import pyarrow as pa

    return (OSError, pa.ArrowException)


def _entry(fi: Any, name: str) -> Entry:
    import pyarrow.fs as pafs

    is_dir = fi.type == pafs.FileType.Directory
    mtime = fi.mtime_ns if fi.mtime_ns is not None else 0
    return Entry(name, is_dir, 0 if is_dir else int(fi.size or 0), int(mtime))


def _bucket_region(bucket: str) -> str:
    """The AWS region of ``bucket`` (one HEAD request); us-east-1 when it cannot be told."""
    import pyarrow.fs as pafs

    try:
        return str(pafs.resolve_s3_region(bucket))
    except (OSError, ValueError):
        return "us-east-1"


_ACCESS_MARKERS = (
    "ACCESS_DENIED",
    "AccessDenied",
    "403",
    "Forbidden",
    "PERMISSION_DENIED",
    "AuthorizationPermissionMismatch",
    "AuthorizationFailure",
)
_CREDENTIAL_MARKERS = (
    "DefaultAzureCredential",
    "AuthenticationException",
    "OAuth2 access token",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "MissingAuthenticationToken",
    "INVALID_ACCESS_KEY_ID",
    "SIGNATURE_DOES_NOT_MATCH",
    "No credentials",
    "credentials",
    "Unauthenticated",
    "UNAUTHENTICATED",
    "401",
    "ExpiredToken",
)
_BUCKET_MARKERS = ("NO_SUCH_BUCKET", "NoSuchBucket", "ContainerNotFound", "bucket does not exist")
_NO_CONNECTION_MARKERS = ("NETWORK_CONNECTION",)
"""The AWS SDK's code for a request that never reached the store. Checked before the
credential markers: its text can mention credentials too, and a store that was never reached
has judged none. (Other clients' texts for an unreachable credential endpoint name their
credential chain, and are read as credential errors.)"""
_UNREACHABLE_MARKERS = (
    *_NO_CONNECTION_MARKERS,
    "Couldn't connect",
    "Could not connect",
    "Connection refused",
    "curlCode",
    "Timeout",
    "timed out",
)


def _mentions(text: str, markers: tuple[str, ...]) -> bool:
    """Whether ``text`` holds one of ``markers``; an HTTP status (digits) only as a whole word,
    so that a port or a size that contains "401" or "403" is not read as one."""
    return any(re.search(rf"(?<!\d){m}(?!\d)", text) if m.isdigit() else m in text for m in markers)


def _map_error(e: Exception, shown: str) -> PerfmodelError:
    """A client error as the perfmodel error a user can act on; the location is scrubbed and
    the client's own text (which may echo request details) is reduced to its error code."""
    text = str(e)
    if isinstance(e, FileNotFoundError):
        return EventLogNotFoundError(f"No such object: {shown}")
    if _mentions(text, _BUCKET_MARKERS):
        return EventLogNotFoundError(f"No such bucket: {shown}")
    if _mentions(text, _NO_CONNECTION_MARKERS):
        return StoreUnavailableError(f"{shown}: the store could not be reached ({_code(text)})")
    if _mentions(text, _CREDENTIAL_MARKERS):
        return StoreAccessError(
            f"{shown}: the store rejected the credentials, or found none ({_code(text)}); "
            "perfmodel uses the platform's standard credential chain (AWS: AWS_ACCESS_KEY_ID/"
            "AWS_PROFILE/instance role; GCS: GOOGLE_APPLICATION_CREDENTIALS; Azure: "
            "DefaultAzureCredential)"
        )
    if _mentions(text, _ACCESS_MARKERS) or isinstance(e, PermissionError):
        return StoreAccessError(
            f"{shown}: access denied ({_code(text)}): no credentials were found in the "
            "platform's standard chain, or those found may not read it"
        )
    if _mentions(text, _UNREACHABLE_MARKERS):
        return StoreUnavailableError(f"{shown}: the store could not be reached ({_code(text)})")
    return StoreUnavailableError(f"{shown}: the store failed ({_code(text)})")


_AWS_CODE = re.compile(r"AWS Error ([A-Z_]+)|\b([A-Z][A-Za-z]+(?:Error|Exception|Denied|Found))\b")


def _code(text: str) -> str:
    """The error code in a client message, not the message (which can echo the request)."""
    if "DefaultAzureCredential" in text:
        return "no token from DefaultAzureCredential"
    if "OAuth2 access token" in text:
        return "no OAuth2 access token"
    m = _AWS_CODE.search(text)
    if m is not None:
        return m.group(1) or m.group(2)
    first = text.splitlines()[0] if text else "unknown error"
    return scrub(first[:160])


def _connect_message(loc: Location, e: Exception) -> str:
    shown = scrub(str(loc))
    if loc.scheme == "hdfs":
        return (
            f"{shown}: cannot reach HDFS ({_code(str(e))}); pyarrow needs Hadoop's libhdfs "
            "(ARROW_LIBHDFS_DIR or HADOOP_HOME), a JVM (JAVA_HOME) and Hadoop's classpath "
            "(CLASSPATH=$(hadoop classpath --glob)); fleet can also read it with --engine spark, "
            "whose Hadoop client Spark brings"
        )
    return f"{shown}: cannot set up the {loc.scheme} client ({_code(str(e))})"
