"""What a log location the user typed means, and how it may be shown.

A location is a local path, an object-store or HDFS URI, or a Spark History Server
address. Parsing is strict where a mistake would otherwise surface as a confusing error
deep inside a client library (an empty bucket, a port that is not a number), and refuses
credentials written into a URI: perfmodel takes them only from each platform's standard
chain, and never prints them. `scrub` is applied to every location that reaches a message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

from perfmodel.errors import PerfmodelError


class SourceError(PerfmodelError):
    """A log location that cannot be used (unknown scheme, malformed URI, credentials in it)."""


SCHEMES: dict[str, str] = {
    "s3": "s3",
    "s3a": "s3",
    "s3n": "s3",
    "gs": "gs",
    "gcs": "gs",
    "abfs": "abfs",
    "abfss": "abfs",
    "hdfs": "hdfs",
    "http": "http",
    "https": "https",
}
"""Schemes read, and the store each one means (Hadoop's ``s3a``/``s3n`` are plain S3)."""

STORE_SCHEMES = frozenset({"s3", "gs", "abfs", "hdfs"})
HTTP_SCHEMES = frozenset({"http", "https"})

_SCHEME_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://(.*)", re.DOTALL)
_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9.\-_]{1,221}[a-z0-9]")
_HOST_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9.\-_]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]")
_ABFS_AUTHORITY_RE = re.compile(r"([a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])?)@([a-z0-9]{3,24})\.(.+)")
_ABFS_HOST_SUFFIXES = ("dfs.core.windows.net", "blob.core.windows.net")
_HISTORY_PATH = re.compile(r"(.*?)/history/([^/]+)(?:/([^/]+))?/*")
_APP_ID = re.compile(r"[A-Za-z0-9_.\-]+")


@dataclass(frozen=True, slots=True)
class Location:
    """A parsed remote location: ``scheme://authority/key``.

    ``scheme`` is the store's canonical scheme (``s3`` for ``s3a``); ``authority`` the
    bucket (S3, GCS), ``container@account.dfs.core.windows.net`` (ABFS) or ``host[:port]``
    (HDFS, HTTP); ``key`` the path inside it without a leading slash (``""``: the root).
    """

    scheme: str
    authority: str
    key: str

    def __str__(self) -> str:
        return f"{self.scheme}://{self.authority}/{self.key}"

    @property
    def name(self) -> str:
        return self.key.rstrip("/").rpartition("/")[2]

    def child(self, name: str) -> Location:
        base = self.key.rstrip("/")
        return Location(self.scheme, self.authority, f"{base}/{name}" if base else name)

    @property
    def parent(self) -> Location:
        return Location(self.scheme, self.authority, self.key.rstrip("/").rpartition("/")[0])

    @property
    def host(self) -> str:
        """``host`` of a ``host:port`` authority (HDFS, HTTP)."""
        return _split_port(self.authority)[0]

    @property
    def port(self) -> int | None:
        return _split_port(self.authority)[1]


def has_scheme(text: str) -> bool:
    """True for ``scheme://…`` (a Windows drive ``C:\\`` is a path, not a scheme)."""
    m = _SCHEME_RE.fullmatch(text)
    return m is not None and len(m.group(1)) > 1


def is_local(text: str) -> bool:
    """A local path: no scheme, or ``file:``."""
    return not has_scheme(text) or text.lower().startswith("file:")


def local_part(text: str) -> str:
    """``file:///x`` → ``/x``; other text unchanged."""
    if text.lower().startswith("file://"):
        return unquote(text[len("file://") :])
    if text.lower().startswith("file:"):
        return unquote(text[len("file:") :])
    return text


def scrub(text: str) -> str:
    """``text`` fit for a message: a URI without user information (``user:secret@``), query
    string or fragment (where SAS tokens and signed-URL signatures live)."""
    m = _SCHEME_RE.fullmatch(text)
    if m is None:
        return text
    scheme, rest = m.group(1), m.group(2)
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    authority, slash, path = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    if at and not _is_abfs_container(scheme, userinfo, host):
        authority = f"***@{host}"
    return f"{scheme}://{authority}{slash}{path}"


def _is_abfs_container(scheme: str, userinfo: str, host: str) -> bool:
    """``container@account.dfs.core.windows.net`` is ABFS's authority, not credentials."""
    return (
        SCHEMES.get(scheme.lower()) == "abfs"
        and ":" not in userinfo
        and host.lower().endswith(_ABFS_HOST_SUFFIXES)
    )


def _split_port(authority: str) -> tuple[str, int | None]:
    if authority.startswith("["):
        host, _, rest = authority.partition("]")
        host += "]"
        port = rest[1:] if rest.startswith(":") else ""
    else:
        host, _, port = authority.partition(":")
    return host, int(port) if port else None


def parse_location(text: str) -> Location:
    """A remote URI as a `Location`; raises `SourceError` naming what is wrong.

    Accepts the store schemes in `SCHEMES`; refuses credentials in the URI, query strings
    (options are perfmodel's own flags, not URI parameters) and malformed authorities.
    """
    m = _SCHEME_RE.fullmatch(text)
    if m is None or len(m.group(1)) == 1:
        raise SourceError(f"{scrub(text)} is not a URI (scheme://…)")
    given, rest = m.group(1).lower(), m.group(2)
    shown = scrub(text)
    scheme = SCHEMES.get(given)
    if scheme is None:
        known = ", ".join(f"{s}://" for s in SCHEMES)
        raise SourceError(
            f"{shown}: unknown scheme {given}://; perfmodel reads local paths and {known}"
        )
    if "?" in rest or "#" in rest:
        raise SourceError(
            f"{shown}: query strings and fragments are not read in a log location (give "
            "options as perfmodel flags; credentials come from the platform's standard chain)"
        )
    authority, _, key = rest.partition("/")
    if any(ch in authority for ch in " \t\r\n\\"):
        raise SourceError(f"{shown}: the authority {authority!r} is not valid")
    userinfo, at, host = authority.rpartition("@")
    if at and not (scheme == "abfs" and _is_abfs_container(given, userinfo, host)):
        raise SourceError(
            f"{shown}: credentials written into the URI are not accepted; perfmodel takes "
            "them only from the platform's standard chain (environment, profile files, "
            "instance role)"
        )
    if not authority and scheme != "hdfs":
        raise SourceError(f"{shown}: no {_authority_word(scheme)} after {given}://")
    if scheme in ("s3", "gs"):
        if not _BUCKET_RE.fullmatch(authority) or ".." in authority:
            raise SourceError(
                f"{shown}: {authority!r} is not a valid bucket name (3-63 lower-case letters, "
                "digits, dots and hyphens)"
            )
    elif scheme == "abfs":
        am = _ABFS_AUTHORITY_RE.fullmatch(authority)
        if am is None or not am.group(3).lower().endswith(_ABFS_HOST_SUFFIXES):
            raise SourceError(
                f"{shown}: write abfs[s]://<container>@<account>.dfs.core.windows.net/<path>"
            )
    elif authority:  # hdfs, http(s): host[:port]
        try:
            host_part, port = _split_port(authority)
        except ValueError:
            raise SourceError(f"{shown}: the port in {authority!r} is not a number") from None
        if not _HOST_RE.fullmatch(host_part) or (port is not None and not 0 < port < 65536):
            raise SourceError(f"{shown}: {authority!r} is not a valid host[:port]")
    key = unquote(key)
    if "\x00" in key:
        raise SourceError(f"{shown}: the path holds a NUL byte")
    return Location(scheme, authority.lower() if scheme != "abfs" else authority, key)


def _authority_word(scheme: str) -> str:
    return {"s3": "bucket", "gs": "bucket", "abfs": "container@account"}.get(scheme, "host")


def format_location(loc: Location) -> str:
    """The URI of ``loc`` with its key percent-encoded where needed (round-trips
    through `parse_location`)."""
    return f"{loc.scheme}://{loc.authority}/{quote(loc.key, safe='/:@!$&()*+,;=~-._')}"


# ---------------------------------------------------------------------------------------------
# History Server addresses (the client is `perfmodel.profile.sources.history`)


def is_history_url(text: str) -> bool:
    return text.lower().startswith(("http://", "https://"))


def parse_history_url(text: str) -> tuple[str, str, str | None]:
    """``(server base URL, app id, attempt)`` from ``http(s)://host:port[/prefix]/history/<app>
    [/<attempt>]`` (the address of the application's page in the History Server UI)."""
    parts = urlsplit(text)
    shown = scrub(text)
    if parts.username or parts.password:
        raise SourceError(
            f"{shown}: credentials written into the URL are not accepted; put them in "
            "~/.netrc (or the file NETRC names)"
        )
    if parts.query or parts.fragment:
        raise SourceError(f"{shown}: query strings and fragments are not read")
    m = _HISTORY_PATH.fullmatch(parts.path)
    if m is None:
        raise SourceError(
            f"{shown}: a History Server application is "
            "http(s)://<host>:<port>/history/<app-id>[/<attempt>]"
        )
    prefix, app_id, attempt = m.groups()
    check_app_id(app_id, shown)
    if attempt is not None:
        check_app_id(attempt, shown)
    try:
        _ = parts.port
    except ValueError:
        raise SourceError(f"{shown}: the port is not a number") from None
    return f"{parts.scheme}://{parts.netloc}{prefix}", app_id, attempt


def check_app_id(app_id: str, shown: str) -> None:
    if not _APP_ID.fullmatch(app_id) or app_id in (".", ".."):
        raise SourceError(f"{shown}: {app_id!r} is not an application id or attempt")


def check_history_server(base: str) -> None:
    """Refuse a History Server address that is not ``http(s)://host[:port][/prefix]`` or
    that carries credentials (they come from ``~/.netrc``)."""
    shown = scrub(base)
    if not is_history_url(base):
        raise SourceError(f"{shown}: a History Server address is http(s)://<host>:<port>")
    parts = urlsplit(base)
    if parts.username or parts.password:
        raise SourceError(
            f"{shown}: credentials written into the URL are not accepted; put them in "
            "~/.netrc (or the file NETRC names)"
        )
    if parts.query or parts.fragment:
        raise SourceError(f"{shown}: query strings and fragments are not read")


def app_url(base: str, app_id: str, attempt: str | None) -> str:
    """The address a fleet run records an application attempt under."""
    suffix = f"/{attempt}" if attempt else ""
    return f"{base.rstrip('/')}/history/{app_id}{suffix}"
