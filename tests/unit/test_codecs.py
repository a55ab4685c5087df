"""Codec decoding against logs written by real Spark, and the ways compressed logs go wrong.

The reference for the real logs is ``tests/data/eventlogs_manifest.json``: Spark's own reader
decompressed each file when it was made (scripts/make_codec_logs.py), so a matching SHA-256
means byte-for-byte agreement with Spark's decoders.
"""

from __future__ import annotations

import collections
import gzip
import hashlib
import json
import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cramjam
import lz4.block
import lz4.frame
import lzf
import pytest
import zstandard

from perfmodel.errors import DecompressionLimitError, NotAnEventLogError, PerfmodelError
from perfmodel.profile.codecs import (
    DecompressionBudget,
    StreamProblem,
    codec_from_name,
    format_bytes,
    iter_decompressed,
    sniff_codec,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "eventlogs"
MANIFEST: dict[str, Any] = json.loads((DATA.parent / "eventlogs_manifest.json").read_text())["logs"]
SINGLE_FILES = ["wordcount.lz4", "wordcount.snappy", "wordcount.lzf", "wordcount.zstd"]


def _real_parts() -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for name, entry in MANIFEST.items():
        if entry["rolling"]:
            for part, info in entry["files"].items():
                if part.startswith("events_"):
                    out.append((DATA / name / part, info))
        else:
            out.append((DATA / name, entry))
    return out


REAL_PARTS = _real_parts()


def decompress(path: Path, **kwargs: Any) -> bytes:
    return b"".join(iter_decompressed(path, **kwargs))


def decompress_until_problem(path: Path, **kwargs: Any) -> tuple[bytes, str | None]:
    """What a reader gets from a damaged stream: the data, then the problem (if any)."""
    out = []
    try:
        for piece in iter_decompressed(path, **kwargs):
            out.append(piece)
    except StreamProblem as e:
        return b"".join(out), e.message
    return b"".join(out), None


@pytest.fixture(scope="module")
def reference() -> dict[str, bytes]:
    """Decompressed text of each real single-file log (verified against Spark's SHA-256)."""
    out = {}
    for name in SINGLE_FILES:
        data = decompress(DATA / name)
        assert hashlib.sha256(data).hexdigest() == MANIFEST[name]["sha256"]
        out[name] = data
    return out


# --- writers for Spark's container formats, for edge cases the real files do not contain ------


def lz4_java_stream(data: bytes, block_size: int = 64 * 1024, end_mark: bool = True) -> bytes:
    level = max(0, (block_size - 1).bit_length() - 10)
    out = bytearray()
    for i in range(0, len(data), block_size):
        block = data[i : i + block_size]
        packed = lz4.block.compress(block, store_size=False)
        if len(packed) >= len(block):
            out += struct.pack("<8sBiii", b"LZ4Block", 0x10 | level, len(block), len(block), 0)
            out += block
        else:
            out += struct.pack("<8sBiii", b"LZ4Block", 0x20 | level, len(packed), len(block), 0)
            out += packed
    if end_mark:
        out += struct.pack("<8sBiii", b"LZ4Block", 0x10 | level, 0, 0, 0)
    return bytes(out)


def snappy_java_stream(data: bytes, block_size: int = 32 * 1024) -> bytes:
    out = bytearray(b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1))
    for i in range(0, len(data), block_size):
        packed = bytes(cramjam.snappy.compress_raw(data[i : i + block_size]))
        out += struct.pack(">i", len(packed)) + packed
    return bytes(out)


def lzf_stream(data: bytes, stored_every: int = 3) -> bytes:
    out = bytearray()
    for n, i in enumerate(range(0, len(data), 0xFFFF)):
        block = data[i : i + 0xFFFF]
        packed = lzf.compress(block)
        if packed is None or n % stored_every == 0:
            out += b"ZV\x00" + struct.pack(">H", len(block)) + block
        else:
            out += b"ZV\x01" + struct.pack(">HH", len(packed), len(block)) + packed
    return bytes(out)


def events(n: int, start: int = 0) -> bytes:
    return b"".join(
        b'{"Event":"SparkListenerTaskEnd","Task ID":%d,"pad":"%s"}\n' % (i, b"x" * (i % 97))
        for i in range(start, start + n)
    )


def write(tmp_path: Path, name: str, data: bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


# --- real Spark logs ------------------------------------------------------------------------


@pytest.mark.parametrize("path,info", REAL_PARTS, ids=[p.name for p, _ in REAL_PARTS])
def test_real_spark_logs_decode_exactly_as_spark_does(path: Path, info: dict[str, Any]) -> None:
    data = decompress(path, in_progress=path.name.endswith(".inprogress"))
    assert len(data) == info["decompressed_bytes"]
    assert hashlib.sha256(data).hexdigest() == info["sha256"]
    lines = [ln for ln in data.split(b"\n") if ln]
    assert len(lines) == info["lines"]
    counts: collections.Counter[str] = collections.Counter()
    bad = 0
    for ln in lines:
        try:
            counts[json.loads(ln)["Event"]] += 1
        except ValueError:
            bad += 1
    assert bad == info["bad_lines"]
    assert dict(counts) == info["event_counts"]


def test_every_codec_holds_the_same_job(reference: dict[str, bytes]) -> None:
    """Same job, four codecs: identical event sequences (timestamps and ids aside)."""
    sequences = {
        name: [json.loads(ln)["Event"] for ln in data.split(b"\n") if ln]
        for name, data in reference.items()
    }
    kinds = {name: collections.Counter(seq) for name, seq in sequences.items()}
    first = kinds[SINGLE_FILES[0]]
    assert first["SparkListenerTaskEnd"] == 11
    assert all(k == first for k in kinds.values())
    for seq in sequences.values():
        assert seq[0] == "SparkListenerLogStart"
        assert seq[-1] == "SparkListenerApplicationEnd"


def test_real_files_carry_the_container_spark_uses() -> None:
    heads = {name: (DATA / name).read_bytes()[:16] for name in SINGLE_FILES}
    assert heads["wordcount.lz4"].startswith(b"LZ4Block")
    assert heads["wordcount.snappy"].startswith(b"\x82SNAPPY\x00")
    assert heads["wordcount.lzf"].startswith(b"ZV")
    assert heads["wordcount.zstd"].startswith(b"\x28\xb5\x2f\xfd")
    assert {n: sniff_codec(h) for n, h in heads.items()} == {
        "wordcount.lz4": "lz4",
        "wordcount.snappy": "snappy",
        "wordcount.lzf": "lzf",
        "wordcount.zstd": "zstd",
    }
    # Spark's lz4 file ends with lz4-java's end mark: an empty raw block.
    tail = (DATA / "wordcount.lz4").read_bytes()[-21:]
    assert tail[:8] == b"LZ4Block" and tail[8] & 0xF0 == 0x10 and tail[9:17] == bytes(8)


def test_spark_zstd_log_has_many_frames() -> None:
    """zstd-jni closes a frame on every flush (SPARK-29322); all frames must be read."""
    raw = (DATA / "wordcount.zstd").read_bytes()
    assert raw.count(b"\x28\xb5\x2f\xfd") > 1
    expected = MANIFEST["wordcount.zstd"]["decompressed_bytes"]
    assert len(decompress(DATA / "wordcount.zstd")) == expected


def test_in_progress_lz4_copy_needs_no_end_mark() -> None:
    path = DATA / "wordcount-running.lz4.inprogress"
    data, problem = decompress_until_problem(path, in_progress=True)
    assert problem is None
    assert hashlib.sha256(data).hexdigest() == MANIFEST[path.name]["sha256"]
    # Read as if complete, the missing end mark is worth a word.
    _, problem = decompress_until_problem(path)
    assert problem is not None and "end mark" in problem


# --- truncation and corruption -------------------------------------------------------------


@pytest.mark.parametrize("name", SINGLE_FILES)
def test_cut_in_half_yields_a_prefix_and_a_problem(
    tmp_path: Path, name: str, reference: dict[str, bytes]
) -> None:
    raw = (DATA / name).read_bytes()
    cut = write(tmp_path, name, raw[: len(raw) // 2])
    data, problem = decompress_until_problem(cut)
    assert problem is not None and "cut off" in problem
    assert reference[name].startswith(data)
    assert len(data) >= 32 * 1024  # the whole blocks before the cut survive


@pytest.mark.parametrize(
    "codec,make",
    [
        ("lz4", lambda d: lz4_java_stream(d, block_size=1024)),
        ("zstd", None),
        ("gz", gzip.compress),
        ("lz4f", lz4.frame.compress),
    ],
)
def test_every_cut_is_noticed(tmp_path: Path, codec: str, make: Any) -> None:
    """Formats with an end (lz4 end mark, zstd frame end, gzip trailer): no cut goes unseen,
    and what comes out before the problem is always a correct prefix."""
    text = events(60)
    if make is None:  # three frames, one with checksum and content size, plus a skippable frame
        c1 = zstandard.ZstdCompressor(write_checksum=True).compress(text[:2000])
        c2 = zstandard.ZstdCompressor(write_content_size=False).compress(text[2000:4000])
        skippable = struct.pack("<II", 0x184D2A53, 5) + b"12345"
        c3 = zstandard.ZstdCompressor(level=19).compress(text[4000:])
        raw = c1 + skippable + c2 + c3
        # A cut exactly between frames leaves a valid stream: nothing to notice there.
        boundaries = {len(c1), len(c1 + skippable), len(c1 + skippable + c2)}
    else:
        raw = make(text)
        boundaries = set()
    assert decompress_until_problem(write(tmp_path, f"full.{codec}", raw)) == (text, None)
    # Every cut in the headers at the start, then a spread over the rest (keeps the test fast).
    # Below 8 bytes the magic is incomplete and the data is not recognised at all.
    cuts = (set(range(8, 40)) | set(range(40, len(raw), 13))) - boundaries
    for cut in sorted(cuts):
        p = write(tmp_path, f"cut.{codec}", raw[:cut])
        data, problem = decompress_until_problem(p)
        assert problem is not None, f"cut at {cut} of {len(raw)} not reported"
        assert text.startswith(data)


@pytest.mark.parametrize("codec", ["snappy", "lzf"])
def test_cuts_without_end_marks(tmp_path: Path, codec: str) -> None:
    """snappy-java and lzf streams have no end mark: cuts inside a chunk are reported, cuts at a
    chunk boundary cannot be; either way only a correct prefix comes out."""
    text = events(600)
    raw = snappy_java_stream(text, 4096) if codec == "snappy" else lzf_stream(text)
    assert decompress_until_problem(write(tmp_path, f"full.{codec}", raw)) == (text, None)
    reported = 0
    for cut in range(16, len(raw), 331):
        data, problem = decompress_until_problem(write(tmp_path, f"cut.{codec}", raw[:cut]))
        assert text.startswith(data)
        reported += problem is not None
    assert reported > 0


def test_corrupt_lz4_block_keeps_the_blocks_before(tmp_path: Path) -> None:
    text = events(400)
    raw = bytearray(lz4_java_stream(text, block_size=4096))
    second = raw.index(b"LZ4Block", 8)
    raw[second + 30 : second + 60] = b"\xff" * 30
    data, problem = decompress_until_problem(write(tmp_path, "bad.lz4", bytes(raw)))
    assert problem is not None and "corrupt" in problem
    assert text.startswith(data) and len(data) >= 4096


def test_corrupt_zstd_keeps_the_frames_before(tmp_path: Path) -> None:
    text = events(200)
    good = zstandard.ZstdCompressor().compress(text)
    # With a content checksum the damage is always detected (without one, zstd may decode
    # damaged literals into garbage text, which the line reader then reports line by line).
    bad = bytearray(zstandard.ZstdCompressor(write_checksum=True).compress(events(200, 200)))
    bad[20:40] = bytes(b ^ 0x5A for b in bad[20:40])
    data, problem = decompress_until_problem(write(tmp_path, "bad.zstd", good + bytes(bad)))
    assert problem is not None and "corrupt" in problem
    assert data.startswith(text)


def test_trailing_garbage_after_zstd_is_reported(tmp_path: Path) -> None:
    text = events(50)
    raw = zstandard.ZstdCompressor().compress(text) + b"garbage!garbage!"
    data, problem = decompress_until_problem(write(tmp_path, "trail.zstd", raw))
    assert data == text and problem is not None


# --- concatenation and other containers ------------------------------------------------------


def test_concatenated_streams(tmp_path: Path) -> None:
    a, b = events(300), events(300, 300)
    cases = {
        "cat.lz4": lz4_java_stream(a) + lz4_java_stream(b),
        "cat.snappy": snappy_java_stream(a) + snappy_java_stream(b),
        "cat.lzf": lzf_stream(a) + lzf_stream(b),
        "cat.zstd": zstandard.ZstdCompressor().compress(a) + zstandard.ZstdCompressor().compress(b),
        "cat.gz": gzip.compress(a) + gzip.compress(b),
        "cat.lz4f": lz4.frame.compress(a) + lz4.frame.compress(b),
    }
    for name, raw in cases.items():
        assert decompress_until_problem(write(tmp_path, name, raw)) == (a + b, None), name


def test_raw_lz4_blocks_and_levels(tmp_path: Path) -> None:
    """Incompressible blocks are stored raw (method 0x10); block size sets the level nibble."""
    text = os.urandom(5000) + events(100)
    for block_size in (64, 1024, 1 << 16, 1 << 20):
        raw = lz4_java_stream(text, block_size=block_size)
        assert decompress(write(tmp_path, "x.lz4", raw)) == text


def test_gzip_and_lz4_frame_as_people_make_them(tmp_path: Path) -> None:
    text = events(2000)
    assert decompress(write(tmp_path, "log.gz", gzip.compress(text))) == text
    assert decompress(write(tmp_path, "log.lz4", lz4.frame.compress(text))) == text


def test_large_stream_comes_in_bounded_pieces(tmp_path: Path) -> None:
    text = events(40_000)  # ~4 MB
    p = write(tmp_path, "big.zstd", zstandard.ZstdCompressor().compress(text))
    pieces = list(iter_decompressed(p, chunk_size=256 * 1024))
    assert b"".join(pieces) == text
    assert len(pieces) > 4 and max(map(len, pieces)) <= 256 * 1024


# --- wrong data --------------------------------------------------------------------------------


def test_codec_is_sniffed_not_trusted_from_the_name(tmp_path: Path) -> None:
    text = events(100)
    assert decompress(write(tmp_path, "plain.lz4", text)) == text
    assert decompress(write(tmp_path, "plain.zstd", text)) == text
    assert decompress(write(tmp_path, "noext", zstandard.ZstdCompressor().compress(text))) == text
    assert decompress(write(tmp_path, "lz4.snappy", lz4_java_stream(text))) == text


def test_random_bytes_named_zstd(tmp_path: Path) -> None:
    p = write(tmp_path, "app.zstd", bytes(range(7, 250)) * 4)
    with pytest.raises(NotAnEventLogError, match=r"app\.zstd.*zstd"):
        decompress(p)


def test_binary_garbage_without_suffix(tmp_path: Path) -> None:
    p = write(tmp_path, "app-1", b"\x89PNG\r\n\x1a\n" + os.urandom(300))
    with pytest.raises(NotAnEventLogError, match="not a Spark event log"):
        decompress(p)


def test_empty_file(tmp_path: Path) -> None:
    with pytest.raises(NotAnEventLogError, match="is empty"):
        decompress(write(tmp_path, "empty.lz4", b""))


def test_utf8_bom_is_dropped(tmp_path: Path) -> None:
    text = events(3)
    assert decompress(write(tmp_path, "bom.json", b"\xef\xbb\xbf" + text)) == text


@pytest.mark.parametrize(
    "name,codec",
    [
        ("local-1.lz4", "lz4"),
        ("local-1.zstd.inprogress", "zstd"),
        ("events_1_app.snappy.compact", "snappy"),
        ("app.zst", "zstd"),
        ("app.gz", "gzip"),
        ("application_1_0001_1", None),
        ("log.txt", None),
        (".lz4", None),
    ],
)
def test_codec_from_name(name: str, codec: str | None) -> None:
    assert codec_from_name(name) == codec


# --- decompression cap -------------------------------------------------------------------------


@pytest.mark.parametrize("name", SINGLE_FILES)
def test_decompression_cap(name: str) -> None:
    with pytest.raises(DecompressionLimitError) as info:
        decompress(DATA / name, max_decompressed_bytes=100_000)
    message = str(info.value)
    assert name in message and "97.66 KiB" in message and "max_decompressed_bytes" in message
    assert info.value.limit == 100_000 and info.value.file.endswith(name)
    assert isinstance(info.value, PerfmodelError)


def test_cap_stops_a_bomb_early(tmp_path: Path) -> None:
    """1 GiB of zeros compresses to ~30 KB; the cap must stop it long before it is all out."""

    def zeros() -> Iterator[bytes]:
        block = b"\0" * (1 << 20)
        for _ in range(1024):
            yield block

    cctx = zstandard.ZstdCompressor(level=3)
    obj = cctx.compressobj()
    bomb = b"".join(obj.compress(b) for b in zeros()) + obj.flush()
    assert len(bomb) < 1 << 20
    p = write(tmp_path, "bomb.zstd", bomb)
    produced = 0
    with pytest.raises(DecompressionLimitError):
        for piece in iter_decompressed(p, max_decompressed_bytes=8 << 20):
            produced += len(piece)
    assert produced <= 8 << 20


def test_budget_is_shared_across_files(tmp_path: Path) -> None:
    text = events(1000)
    a = write(tmp_path, "a.zstd", zstandard.ZstdCompressor().compress(text))
    budget = DecompressionBudget(int(len(text) * 1.5))
    decompress(a, budget=budget)
    with pytest.raises(DecompressionLimitError):
        decompress(a, budget=budget)


def test_plain_data_is_not_capped(tmp_path: Path) -> None:
    text = events(1000)
    assert decompress(write(tmp_path, "p", text), max_decompressed_bytes=10) == text


def test_format_bytes() -> None:
    assert format_bytes(20 * 1024**3) == "20 GiB"
    assert format_bytes(512) == "512 bytes"
    assert format_bytes(3 * 1024**2 + 1) == "3 MiB"
