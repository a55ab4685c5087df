"""Parsing and scrubbing of log locations (`perfmodel.profile.sources.uri`), the History
Server address parser, and the zip store's refusals (path traversal, bombs)."""

from __future__ import annotations

import io
import zipfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.errors import DecompressionLimitError, NotAnEventLogError, PerfmodelError
from perfmodel.profile.sources.history import ZipStore
from perfmodel.profile.sources.locate import log_path
from perfmodel.profile.sources.stores import (
    RemotePath,
    StoreAccessError,
    StoreUnavailableError,
    _map_error,
)
from perfmodel.profile.sources.uri import (
    Location,
    SourceError,
    format_location,
    parse_history_url,
    parse_location,
    scrub,
)

buckets = st.from_regex(r"[a-z0-9][a-z0-9\-]{1,40}[a-z0-9]", fullmatch=True)
keys = st.lists(
    st.text(
        st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)),
        min_size=1,
        max_size=12,
    ),
    max_size=5,
).map("/".join)
secrets = st.text(st.characters(whitelist_categories=("L", "N")), min_size=6, max_size=20)


@given(st.sampled_from(["s3", "gs"]), buckets, keys)
def test_object_store_uris_round_trip(scheme: str, bucket: str, key: str) -> None:
    loc = Location(scheme, bucket, key)
    assert parse_location(format_location(loc)) == loc


@given(
    st.sampled_from(["s3", "s3a", "s3n", "gs"]),
    buckets,
    keys.filter(lambda k: not set(k) & set("?#%")),
)
def test_plain_keys_are_read_as_typed(scheme: str, bucket: str, key: str) -> None:
    loc = parse_location(f"{scheme}://{bucket}/{key}")
    assert loc.scheme in ("s3", "gs") and loc.authority == bucket and loc.key == key


@given(st.text(max_size=80))
def test_parsing_anything_raises_only_source_errors(text: str) -> None:
    try:
        loc = parse_location(text)
    except SourceError:
        return
    assert isinstance(loc, Location)


@given(st.sampled_from(["s3", "gs", "hdfs", "https", "abfss"]), secrets, secrets, buckets, keys)
def test_scrub_never_shows_credentials(scheme, user, secret, host, key) -> None:
    text = f"{scheme}://{user}:{secret}@{host}/{key}?sig={secret}#{secret}"
    shown = scrub(text)
    assert secret not in shown.partition("/")[2].partition("/")[2].partition("/")[0]
    assert f":{secret}@" not in shown and f"sig={secret}" not in shown
    with pytest.raises(PerfmodelError) as err:
        parse_location(text) if scheme != "https" else parse_history_url(text)
    assert f":{secret}@" not in str(err.value)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("s3://", "no bucket"),
        ("s3://Bad_Bucket/x", "not a valid bucket"),
        ("ftp://host/x", "unknown scheme ftp://"),
        ("hdfs://nn:notaport/x", "port"),
        ("abfss://onlyaccount.dfs.core.windows.net/x", "container"),
        ("s3://b/x?versionId=1", "query strings"),
    ],
)
def test_bad_uris_say_why(text: str, why: str) -> None:
    with pytest.raises(SourceError, match=why):
        parse_location(text)


def test_schemes_map_to_stores() -> None:
    assert parse_location("s3a://bucket/k").scheme == "s3"
    loc = parse_location("abfss://logs@acct.dfs.core.windows.net/spark/app")
    assert (loc.scheme, loc.authority, loc.key) == (
        "abfs",
        "logs@acct.dfs.core.windows.net",
        "spark/app",
    )
    assert parse_location("hdfs://nn:8020/spark-logs/app").port == 8020
    assert parse_location("hdfs:///spark-logs").authority == ""


def test_local_paths_stay_paths(tmp_path) -> None:
    cap = 1 << 20
    assert log_path(str(tmp_path), max_decompressed_bytes=cap) == tmp_path
    assert log_path(f"file://{tmp_path}", max_decompressed_bytes=cap) == tmp_path
    assert log_path("C:\\logs\\app", max_decompressed_bytes=cap).name  # not a scheme
    remote = log_path("s3://bucket/prefix/", max_decompressed_bytes=cap)
    assert isinstance(remote, RemotePath) and str(remote) == "s3://bucket/prefix"


@given(
    st.sampled_from(["http", "https"]),
    st.from_regex(r"[a-z][a-z0-9\-]{0,20}", fullmatch=True),
    st.from_regex(r"(app|local|application)-[0-9_]{1,20}", fullmatch=True),
    st.one_of(st.none(), st.integers(1, 9).map(str)),
)
def test_history_urls(scheme: str, host: str, app: str, attempt: str | None) -> None:
    suffix = f"/{attempt}" if attempt else ""
    base, app_id, got_attempt = parse_history_url(f"{scheme}://{host}:18080/history/{app}{suffix}")
    assert (base, app_id, got_attempt) == (f"{scheme}://{host}:18080", app, attempt)


@pytest.mark.parametrize(
    "text", ["http://shs/history/../etc", "http://shs/api/v1/x", "http://u:p@shs/history/a"]
)
def test_bad_history_urls(text: str) -> None:
    with pytest.raises(SourceError):
        parse_history_url(text)


def _zip(entries: dict[str, bytes]) -> io.BytesIO:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("name", ["../escape", "/abs/path", "a/../../b", "dir\\file"])
def test_zip_entries_that_escape_are_refused(name: str) -> None:
    with pytest.raises(NotAnEventLogError, match="unsafe name"):
        ZipStore(_zip({name: b"{}\n"}), "http://shs/history/a", 1 << 20)


def test_zip_bomb_is_refused_before_inflating() -> None:
    bomb = _zip({"app": b"\0" * (4 << 20)})  # 4 MiB of zeros deflate to ~4 KiB
    assert len(bomb.getvalue()) < 64 << 10
    with pytest.raises(DecompressionLimitError):
        ZipStore(bomb, "http://shs/history/a", 1 << 20)


def test_truncated_zip_is_refused() -> None:
    data = _zip({"app": b'{"Event":"SparkListenerLogStart"}\n' * 1000}).getvalue()
    with pytest.raises(NotAnEventLogError, match="damaged or cut off"):
        ZipStore(io.BytesIO(data[: len(data) // 2]), "http://shs/history/a", 1 << 30)


@settings(max_examples=50)
@given(
    st.dictionaries(
        # A ".." part is refused as unsafe (test_zip_entries_that_escape_are_refused).
        st.from_regex(r"[a-z0-9_]{1,8}(/[a-z0-9_.]{1,8}){0,2}", fullmatch=True).filter(
            lambda name: ".." not in name.split("/")
        ),
        st.binary(max_size=64),
        max_size=6,
    )
)
def test_zip_store_lists_what_it_holds(entries: dict[str, bytes]) -> None:
    names = set(entries)
    if any(a != b and b.startswith(a + "/") for a in names for b in names):
        return  # a name that is also a directory: not a zip a server writes
    store = ZipStore(_zip(entries), "http://shs/history/a", 1 << 20)
    root = store.root()
    for name, data in entries.items():
        path = root
        for part in name.split("/"):
            path = path / part
        assert path.is_file() and path.stat().st_size == len(data)
        with store.open(path.loc) as f:
            assert f.read() == data


def test_a_refused_connection_is_unreachable_even_when_the_text_mentions_credentials() -> None:
    """The AWS SDK's text for a refused connection may also speak of credentials (it retried
    the credential chain); the store was never reached, so it judged no credentials."""
    refused = (
        "When reading information for key 'app.zstd' in bucket 'logs': AWS Error "
        "NETWORK_CONNECTION during HeadObject operation: curlCode: 7, Couldn't connect to server"
    )
    for text in (refused, refused + " (while refreshing credentials)"):
        err = _map_error(OSError(text), "s3://logs/app.zstd")
        assert isinstance(err, StoreUnavailableError)
        assert str(err) == "s3://logs/app.zstd: the store could not be reached (NETWORK_CONNECTION)"
    denied = "AWS Error ACCESS_DENIED during HeadObject operation: No credentials found"
    assert isinstance(_map_error(OSError(denied), "s3://logs/app.zstd"), StoreAccessError)


def test_an_http_status_is_read_only_as_a_whole_number() -> None:
    """A port such as 40137 in the text is no HTTP 401."""
    text = "AWS Error UNKNOWN during HeadObject operation: endpoint 127.0.0.1:40137 failed"
    err = _map_error(OSError(text), "s3://logs/app.zstd")
    assert str(err) == "s3://logs/app.zstd: the store failed (UNKNOWN)"
    status = "AWS Error UNKNOWN (HTTP status 401) during HeadObject operation"
    assert isinstance(_map_error(OSError(status), "s3://logs/app.zstd"), StoreAccessError)
