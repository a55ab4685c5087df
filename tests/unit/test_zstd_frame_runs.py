"""Runs of whole zstd frames decoded in one call (`zstd_frames.whole_frame_runs`).

Spark's zstd-jni writes one small frame per flush, tens of thousands in a big log; decoding
them a run at a time must give the same bytes, the same bounded pieces and the same damage
reports as decoding them one block at a time.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.profile import codec_streams
from perfmodel.profile.codecs import DEFAULT_CHUNK_SIZE, StreamProblem, iter_decompressed
from perfmodel.profile.zstd_frames import ZSTD_MAX_BLOCK, ZstdFrameTracker, whole_frame_runs

BATCH = DEFAULT_CHUNK_SIZE // ZSTD_MAX_BLOCK
"""Blocks in a run when pieces are the default size."""


def events(n: int, start: int = 0) -> bytes:
    return b"".join(
        b'{"Event":"SparkListenerTaskEnd","Task ID":%d,"pad":"%s"}\n' % (i, b"y" * (i % 89))
        for i in range(start, start + n)
    )


def frames(texts: list[bytes], checksum: bool = False) -> list[bytes]:
    """One frame per text, as zstd-jni writes one per flush."""
    cctx = zstandard.ZstdCompressor(write_checksum=checksum)
    return [cctx.compress(t) for t in texts]


def read(path: Path) -> tuple[bytes, str | None]:
    out = []
    try:
        for piece in iter_decompressed(path):
            out.append(piece)
    except StreamProblem as e:
        return b"".join(out), e.message
    return b"".join(out), None


def test_many_small_frames_decode_in_few_calls(tmp_path: Path) -> None:
    texts = [events(20, 20 * i) for i in range(300)]
    raw = b"".join(frames(texts))
    runs = whole_frame_runs(raw, 0, len(raw), BATCH)
    assert runs and runs[-1] == len(raw)
    assert len(runs) <= 300 // BATCH + 1  # one block per small frame
    p = tmp_path / "many.zstd"
    p.write_bytes(raw)
    assert read(p) == (b"".join(texts), None)


def test_a_run_never_holds_more_blocks_than_allowed() -> None:
    text = os.urandom(400_000)  # incompressible: raw blocks of 128 KiB, four per frame
    raw = b"".join(frames([text] * 5))
    assert whole_frame_runs(raw, 0, len(raw), 3) == []  # a frame of 4 blocks is never batched
    runs = whole_frame_runs(raw, 0, len(raw), 8)
    assert runs == [2 * len(raw) // 5, 4 * len(raw) // 5, len(raw)]


@pytest.mark.parametrize("read_size", [5, 64, 1000, 4096, 1 << 20])
def test_frames_cut_by_every_read_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_size: int
) -> None:
    texts = [events(3 + i % 7, 10 * i) for i in range(200)]
    p = tmp_path / "cut.zstd"
    p.write_bytes(b"".join(frames(texts, checksum=True)))
    monkeypatch.setattr(codec_streams, "READ_SIZE", read_size)
    assert read(p) == (b"".join(texts), None)


def test_damage_inside_a_run_keeps_every_frame_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    redone: list[int] = []
    redo = codec_streams._redo_blocks

    def spy(run: memoryview, decoded: int) -> Iterator[bytes]:
        redone.append(decoded)
        return redo(run, decoded)

    monkeypatch.setattr(codec_streams, "_redo_blocks", spy)
    texts = [events(30, 30 * i) for i in range(40)]
    parts = frames(texts, checksum=True)
    bad = bytearray(parts[25])
    bad[12:30] = bytes(b ^ 0x5A for b in bad[12:30])
    parts[25] = bytes(bad)
    raw = b"".join(parts)
    runs = whole_frame_runs(raw, 0, len(raw), BATCH)
    assert runs[-1] == len(raw) and 25 % BATCH  # the damaged frame is inside a run
    p = tmp_path / "bad.zstd"
    p.write_bytes(raw)
    data, problem = read(p)
    before = b"".join(texts[:25])
    assert data == before
    assert problem is not None and f"corrupt after {len(before):,} decompressed bytes" in problem
    assert len(redone) == 1  # the run failed as a whole and was read again block by block


def test_skippable_frames_and_reserved_bits_leave_the_run(tmp_path: Path) -> None:
    texts = [events(10, 10 * i) for i in range(30)]
    parts = frames(texts)
    skippable = (0x184D2A5A).to_bytes(4, "little") + (6).to_bytes(4, "little") + b"vendor"
    raw = b"".join(parts[:10]) + skippable + b"".join(parts[10:])
    p = tmp_path / "skip.zstd"
    p.write_bytes(raw)
    assert read(p) == (b"".join(texts), None)
    runs = whole_frame_runs(raw, 0, len(raw), BATCH)
    assert runs[-1] == len(b"".join(parts[:10]))  # the walk stops at the skippable frame

    reserved = bytearray(parts[5])
    reserved[4] |= 0x08  # a reserved frame-header bit: the careful path reports it
    raw = b"".join(parts[:5]) + bytes(reserved) + b"".join(parts[6:])
    p.write_bytes(raw)
    data, problem = read(p)
    assert data == b"".join(texts[:5])
    assert problem is not None and "invalid zstd frame header" in problem


def test_truncation_inside_the_last_frame_is_still_noticed(tmp_path: Path) -> None:
    texts = [events(10, 10 * i) for i in range(50)]
    raw = b"".join(frames(texts))
    p = tmp_path / "cut.zstd"
    p.write_bytes(raw[:-7])
    data, problem = read(p)
    assert b"".join(texts).startswith(data) and len(data) >= len(b"".join(texts[:49]))
    assert problem is not None and "cut off" in problem


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=300), min_size=1, max_size=40),
    cut=st.integers(min_value=0, max_value=10_000),
    max_blocks=st.integers(min_value=1, max_value=5),
)
def test_runs_and_the_careful_path_agree(sizes: list[int], cut: int, max_blocks: int) -> None:
    """Whatever the frames and wherever the data stops, decoding runs of whole frames and
    decoding block by block give the same bytes, and the tracker ends in the same state."""
    texts = [events(n, 1000 * i) for i, n in enumerate(sizes)]
    raw = b"".join(frames(texts))[:cut]
    outputs = []
    for batch in (0, max_blocks):
        tracker = ZstdFrameTracker()
        ends = tracker.feed(raw, batch)
        if tracker.error is None:
            ends.append(len(raw))
        dobj = zstandard.ZstdDecompressor().decompressobj(read_across_frames=True)
        start, out = 0, []
        for end in ends:
            if end > start:
                out.append(dobj.decompress(raw[start:end]))
                start = end
        outputs.append((b"".join(out), tracker.at_boundary, tracker.error))
    assert outputs[0] == outputs[1]
