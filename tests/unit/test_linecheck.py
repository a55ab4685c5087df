"""Line checks of the reader: bad UTF-8 repaired per line, cut-off last events recognised,
and the kinds of damage the event decoder's messages name."""

from __future__ import annotations

import msgspec
import pytest

from perfmodel.profile.linecheck import is_cut_event, repair_utf8
from perfmodel.profile.quality import line_problem_kind
from perfmodel.spark import events as ev


def test_valid_utf8_is_not_copied() -> None:
    assert repair_utf8(b'{"a":"\xc3\xa9"}\n{"b":1}\n') == (None, [])


def test_each_damaged_line_is_repaired_and_named_by_its_index() -> None:
    data = b'{"a":"ok"}\n{"a":"\xff"}\n{"a":"fine"}\n{"a":"\xc3(","b":"\xfe"}\n{"a":1}'
    repaired, damaged = repair_utf8(memoryview(data))
    assert [index for index, _ in damaged] == [1, 3]
    assert "byte 0xff at column 7" in damaged[0][1]
    assert repaired is not None
    lines = repaired.split(b"\n")
    assert len(lines) == 5 and lines[0] == b'{"a":"ok"}' and lines[4] == b'{"a":1}'
    assert msgspec.json.decode(lines[1]) == {"a": "\ufffd"}
    assert msgspec.json.decode(lines[3]) == {"a": "\ufffd(", "b": "\ufffd"}


def test_a_block_full_of_damage_is_repaired_in_one_pass() -> None:
    data = b'{"a":"\xff"}\n' * 20_000
    repaired, damaged = repair_utf8(data)
    assert len(damaged) == 20_000 and repaired is not None and repaired.count(b"\n") == 20_000


@pytest.mark.parametrize(
    ("line", "cut"),
    [
        (b'{"Event":"SparkListenerTaskEnd","Stage ID":1', True),
        (b'{"Event":"Spark', True),
        (b"{", True),
        (b'{"Event":"SparkListenerTaskEnd"}', False),  # complete, only the newline missing
        (b'{"Event":"SparkListenerTaskEnd"}}', False),  # damaged, not cut
        (b"   ", False),
        (b'{"a":"\xff"}', False),  # whole, with a bad byte: damage, not a cut
    ],
)
def test_a_cut_off_event_is_told_from_a_damaged_line(line: bytes, cut: bool) -> None:
    assert is_cut_event(line) is cut


def _message(line: bytes) -> str:
    try:
        ev.DECODERS[b"SparkListenerTaskEnd"].decode(line)
    except msgspec.DecodeError as exc:  # what the builder reports, with its prefix
        return f"not valid JSON ({exc}); line starts: ..."
    raise AssertionError("decoded")


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        (b'{"Event":"SparkListenerTaskEnd","Stage ID":' + b"9" * 40 + b"}", "out_of_range_value"),
        (b'{"Event":"SparkListenerTaskEnd","Stage ID":"one"}', "wrong_type"),
        (b'{"Event":"SparkListenerTaskEnd","Stage ID":1,}', "undecodable_line"),
    ],
)
def test_decoder_messages_name_the_kind_of_damage(line: bytes, kind: str) -> None:
    assert line_problem_kind(_message(line)) == kind
