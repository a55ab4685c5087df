"""Issue 42, class 9: messages and refusals that misread what they met — a damaged first
line, CR-only line endings, a lost version line, ``_N`` in a name, a byte-order mark."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfmodel.analysis import load
from perfmodel.profile.codecs import sniff_codec
from perfmodel.profile.eventlog_paths import _split_attempt, resolve_event_log
from perfmodel.recommend.catalog import parse_catalog
from perfmodel.spark.load import build_profile
from tests.fuzz_support import shared_log
from tests.unit.hostile_helpers import wordcount_events, write_events

CATALOG = Path(__file__).resolve().parents[2] / "catalogs" / "example-cloud.csv"


def _lines() -> list[bytes]:
    return [msgspec.json.encode(e) for e in wordcount_events()]


@given(
    # Junk that starts with a codec's magic bytes (gzip's 1f 8b) is taken for that codec's
    # data, rightly: magic bytes win.
    junk=st.binary(min_size=1, max_size=300).filter(
        lambda b: b"\n" not in b and sniff_codec(b) in (None, "plain")
    )
)
def test_a_damaged_first_line_does_not_refuse_the_log(
    tmp_path_factory: pytest.TempPathFactory, junk: bytes
) -> None:
    """NUL bytes (a crash before the first write was flushed), or any junk, as line one."""
    path = tmp_path_factory.mktemp("head") / "log.json"
    path.write_bytes(junk + b"\n" + b"\n".join(_lines()) + b"\n")
    loaded = build_profile(path)
    assert len(loaded.profile.task_table()) == 11
    assert loaded.profile.framework_version is not None or loaded.header_lines_skipped == 0


def test_thirty_nul_bytes_then_the_log(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    path.write_bytes(b"\x00" * 30 + b"\n" + b"\n".join(_lines()) + b"\n")
    loaded = build_profile(path)
    assert len(loaded.profile.task_table()) == 11
    assert loaded.header_lines_skipped == 1


@pytest.mark.parametrize("ending", [b"\r", b"\r\n", b"\n"])
def test_every_line_ending(tmp_path: Path, ending: bytes) -> None:
    path = tmp_path / "log.json"
    path.write_bytes(ending.join(_lines()) + ending)
    loaded = build_profile(path)
    assert len(loaded.profile.task_table()) == 11
    assert not loaded.quality.damaged


def test_a_lost_version_line_is_not_called_a_pre_1_3_log(tmp_path: Path) -> None:
    events = wordcount_events()
    assert events[0]["Event"] == "SparkListenerLogStart"
    d = load(write_events(tmp_path / "log.json", events[1:])).diagnose()
    assert d.spark_version.startswith("unknown")
    assert "1.3" not in d.spark_version
    assert "first line" in d.spark_version


def test_a_spark_1_2_log_still_predates_1_3() -> None:
    d = load(shared_log("local-1422981780767")).diagnose()
    assert d.spark_version == "unknown (log predates Spark 1.3)"


@given(
    name=st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True).filter(
        lambda n: not n.startswith(("local-", "app-", "spark-", "application"))
    ),
    number=st.integers(0, 10**6),
)
def test_n_after_a_name_that_is_no_app_id_is_no_attempt(name: str, number: int) -> None:
    assert _split_attempt(f"{name}_{number}") == (f"{name}_{number}", None)


@pytest.mark.parametrize(
    ("key", "app", "attempt"),
    [
        ("application_1538416563558_0014_2", "application_1538416563558_0014", "2"),
        ("local-1623876083964_1", "local-1623876083964", "1"),
        ("app-20161115172038-0000_3", "app-20161115172038-0000", "3"),
        ("spark-cc4d115f011443d787f03a71a476a745_1", "spark-cc4d115f011443d787f03a71a476a745", "1"),
        ("report_2024", "report_2024", None),
        ("myapp_3", "myapp_3", None),
    ],
)
def test_attempts_of_spark_app_ids(key: str, app: str, attempt: str | None) -> None:
    assert _split_attempt(key) == (app, attempt)


def test_a_file_named_like_an_attempt_is_read_as_itself(tmp_path: Path) -> None:
    log = write_events(tmp_path / "myapp_3", wordcount_events())
    source = resolve_event_log(log)
    assert source.attempt is None and source.other_attempts == []


def test_a_catalog_with_a_byte_order_mark(tmp_path: Path) -> None:
    plain = parse_catalog(CATALOG)
    marked = tmp_path / "excel.csv"
    shutil.copy(CATALOG, marked)
    marked.write_bytes(b"\xef\xbb\xbf" + CATALOG.read_bytes())
    assert parse_catalog(marked) == plain
