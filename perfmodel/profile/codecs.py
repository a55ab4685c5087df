"""Streaming decompression of the codecs Spark writes event logs with.

This module is the entry point: it recognises a file's codec (magic bytes first, the file name
only for the error message), caps the total decompressed size per log, and hands the pieces of
one file to the event-log reader through :func:`iter_decompressed`. Parsing each codec's stream
container lives in :mod:`perfmodel.profile.codec_streams`.

Every decoder streams: it reads the file in pieces and yields decompressed data in pieces of
bounded size, so a multi-gigabyte log never has to fit in memory, and a cap on the total
decompressed size stops decompression bombs (a few kilobytes of zstd can expand to gigabytes).

A stream that ends early (a log copied while Spark was writing it, a crash, a partial download)
is common in practice. Decoders therefore yield everything they could decode and only then raise
:class:`StreamProblem`; the caller reports it and keeps the events it got.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator
from pathlib import Path

from perfmodel.errors import DecompressionLimitError, NotAnEventLogError
from perfmodel.profile.codec_streams import (
    DECODERS,
    GZIP_MAGIC,
    LZ4_BLOCK_MAGIC,
    LZ4_FRAME_MAGIC,
    READ_SIZE,
    SNAPPY_MAGIC,
    UTF8_BOM,
    ZSTD_MAGIC,
    StreamContext,
    StreamProblem,
    read_plain,
)
from perfmodel.profile.sources.stores import LogPath, open_input

__all__ = [
    "CODEC_SUFFIXES",
    "DEFAULT_CHUNK_SIZE",
    "DEFAULT_MAX_DECOMPRESSED",
    "DecompressionBudget",
    "StreamProblem",
    "codec_from_name",
    "detect_codec",
    "iter_decompressed",
    "sniff_codec",
]

DEFAULT_MAX_DECOMPRESSED = 20 * 1024**3
"""Default cap on decompressed bytes per event log (all parts together)."""

DEFAULT_CHUNK_SIZE = 1024 * 1024
"""Size of the pieces handed to the line splitter: big enough that per-piece Python overhead
vanishes next to ``bytes.split``, small enough to stay in cache until the lines are decoded
(1 MiB measured faster than 4 or 16 MiB)."""

HEAD_SIZE = 512
"""Bytes looked at to recognise a file's format."""

# Spark's codec short names are the file suffixes (EventLogFileWriter.codecName); .zst and .gz are
# what people produce when they recompress a log by hand.
CODEC_SUFFIXES: dict[str, str] = {
    "zstd": "zstd",
    "zst": "zstd",
    "lz4": "lz4",
    "snappy": "snappy",
    "lzf": "lzf",
    "gz": "gzip",
    "gzip": "gzip",
}


class DecompressionBudget:
    """Counts decompressed bytes across all parts of one log, so the cap is per log, not per file.

    A rolling log of 1,000 parts of 1 GiB each is a 1 TB log; capping each part alone would not
    protect anything.
    """

    __slots__ = ("limit", "used")

    def __init__(self, limit: int = DEFAULT_MAX_DECOMPRESSED) -> None:
        if limit <= 0:
            raise ValueError(f"max_decompressed_bytes must be positive, got {limit}")
        self.limit = limit
        self.used = 0

    def charge(self, n: int, file: str) -> None:
        self.used += n
        if self.used > self.limit:
            raise DecompressionLimitError(
                f"{file}: decompressed event-log data exceeds {format_bytes(self.limit)}, the "
                "limit that guards against decompression bombs. If the log is genuine, raise the "
                "limit (--max-decompressed-bytes on the command line, max_decompressed_bytes "
                "in Python).",
                file=file,
                limit=self.limit,
            )


def format_bytes(n: int) -> str:
    """Human-readable size for messages (binary units, as the limits are set in GiB)."""
    size = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            if unit == "bytes":
                return f"{n:,} bytes"
            return f"{size:.4g} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def codec_from_name(name: str) -> str | None:
    """The codec a file name claims, following Spark: last dotted segment after stripping
    ``.compact`` and ``.inprogress``. ``None`` means no codec suffix (plain, as far as the name
    goes)."""
    for suffix in (".inprogress", ".compact", ".inprogress"):
        name = name.removesuffix(suffix)
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem:
        return None
    return CODEC_SUFFIXES.get(ext.lower())


def sniff_codec(head: bytes) -> str | None:
    """Identify the data by its first bytes; ``None`` if it is neither a known codec nor JSON.

    Magic bytes win over the file name: renamed and recompressed logs are common, and each
    container here has an unambiguous magic that JSON text cannot start with.
    """
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    if len(head) >= 4 and (int.from_bytes(head[:4], "little") & 0xFFFFFFF0) == 0x184D2A50:
        return "zstd"  # zstd skippable frame
    if head.startswith(LZ4_BLOCK_MAGIC):
        return "lz4"
    if head.startswith(SNAPPY_MAGIC):
        return "snappy"
    if head[:2] == b"ZV" and len(head) >= 3 and head[2] in (0, 1):
        return "lzf"
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(LZ4_FRAME_MAGIC):
        return "lz4-frame"
    if _looks_like_text(head):
        # Not necessarily JSON: vendor logs (and old Spark metadata blocks) start with header
        # lines, and the event decoder is the one to judge whether events follow.
        return "plain"
    return None


_CONTROL_BYTES = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_utf8_decoder = codecs.getincrementaldecoder("utf-8")
_MAX_BAD_HEAD_BYTES_RATIO = 1 / 32


def _looks_like_text(head: bytes) -> bool:
    """Mostly UTF-8 without control characters (a multi-byte character may be cut at the end).

    A few bad bytes are tolerated: one damaged line near the start (a flipped bit, a stray
    control byte) must not make a whole log count as binary, as its other lines are fine; the
    event decoder skips and counts the damaged line. Binary data (compressed with a codec
    perfmodel does not know, a stream of zeros) has bad bytes everywhere.
    """
    head = head.removeprefix(UTF8_BOM)
    if _mostly_text(head):
        return True
    # One damaged line at the very start (a header of NUL bytes left by a crash, a
    # half-overwritten first event): the lines after it decide. A stream of zeros or
    # compressed data holds no line break followed by text.
    first_nl = head.find(b"\n")
    rest = head[first_nl + 1 :]
    return first_nl >= 0 and len(rest) >= _MIN_TEXT_AFTER_BAD_LINE and _mostly_text(rest)


_MIN_TEXT_AFTER_BAD_LINE = 64
"""Bytes after a damaged first line that must look like text for the data to be text."""


def _mostly_text(head: bytes) -> bool:
    text = _utf8_decoder("replace").decode(head, final=False)
    bad = text.count("\ufffd") + len(_CONTROL_BYTES.findall(head))
    return bad <= max(1, int(len(head) * _MAX_BAD_HEAD_BYTES_RATIO))


def _show_head(head: bytes) -> str:
    return repr(head[:16])


def detect_codec(path: LogPath | str, head: bytes) -> str:
    """Codec of a file given its first bytes, or a :class:`NotAnEventLogError` that says why not."""
    sniffed = sniff_codec(head)
    if sniffed is not None:
        return sniffed
    named = codec_from_name(Path(path).name if isinstance(path, str) else path.name)
    if named is not None:
        raise NotAnEventLogError(
            f"{path} is named like a {named}-compressed event log, but its data is neither "
            f"{named} as Spark writes it nor plain text (it starts with {_show_head(head)}). The "
            "file may be damaged, or compressed with something perfmodel does not read (it reads "
            "plain JSON lines and Spark's zstd, lz4, snappy and lzf, plus gzip)."
        )
    raise NotAnEventLogError(
        f"{path} is not a Spark event log: it is binary data, but not compressed with a codec "
        f"Spark uses (it starts with {_show_head(head)})."
    )


def iter_decompressed(
    path: LogPath | str,
    *,
    budget: DecompressionBudget | None = None,
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    in_progress: bool = False,
) -> Iterator[bytes]:
    """Yield the decompressed content of one file in pieces of about ``chunk_size`` bytes.

    Raises :class:`NotAnEventLogError` (empty file, unknown data) before yielding anything,
    :class:`DecompressionLimitError` when the budget runs out, and :class:`StreamProblem` after
    the last decodable piece when the stream is truncated or corrupt. ``in_progress`` says the
    writer may still be appending, so a missing end-of-stream mark is expected, not a problem.
    Pieces split lines anywhere; plain files are passed through unchanged.
    """
    if budget is None:
        budget = DecompressionBudget(max_decompressed_bytes)
    file = str(path)
    with open_input(path, buffering=READ_SIZE) as f:  # local or remote, streamed
        head = f.read(HEAD_SIZE)
        if not head:
            raise NotAnEventLogError(f"{file} is empty.")
        codec = detect_codec(path, head)
        f.seek(0)
        ctx = StreamContext(file, chunk_size, in_progress)
        if codec == "plain":
            yield from read_plain(f, ctx)
            return
        yield from _coalesce(DECODERS[codec](f, ctx), ctx, budget)


def _coalesce(
    pieces: Iterator[bytes], ctx: StreamContext, budget: DecompressionBudget
) -> Iterator[bytes]:
    """Join small decoded blocks (lz4/snappy: 32 KiB) into big pieces and charge the budget.

    The line splitter's cost is per piece, so feeding it 32 KiB blocks would waste time gluing
    the line cut at every block boundary.
    """
    size = ctx.chunk_size
    buf: list[bytes] = []
    n = 0
    try:
        for piece in pieces:
            budget.charge(len(piece), ctx.file)
            if not buf and len(piece) >= size:
                yield piece
                continue
            buf.append(piece)
            n += len(piece)
            if n >= size:
                yield b"".join(buf)
                buf = []
                n = 0
    except StreamProblem:
        if buf:
            yield b"".join(buf)
        raise
    if buf:
        yield b"".join(buf)
