"""Readers for the stream containers of each codec, one generator per codec.

Spark does not use the standard container formats of its codecs: ``.lz4`` is lz4-java's
``LZ4BlockOutputStream`` (not the LZ4 frame format), ``.snappy`` is snappy-java's
``SnappyOutputStream`` (not the snappy framing format) and ``.lzf`` is compress-lzf's chunk
stream. Only ``.zstd`` is standard (zstd-jni writes ordinary frames, one per flush). The stock
Python libraries only know the standard containers, so the Spark containers are parsed here and
just the payloads are handed to ``lz4.block``, ``cramjam.snappy`` and ``lzf``.

This module exists apart from :mod:`perfmodel.profile.codecs` because the byte-level container
parsing is a separate concern from recognising a file's codec, capping decompressed size and
coalescing output; the codecs module picks a reader from :data:`DECODERS` and drives it. Each
reader takes an open binary file and a :class:`StreamContext`, yields decompressed pieces of
bounded size and, when the stream ends early or is corrupt, raises :class:`StreamProblem` after
yielding everything it could decode.
"""

from __future__ import annotations

import struct
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from perfmodel.profile.zstd_frames import ZSTD_MAX_BLOCK, ZstdFrameTracker

if sys.version_info >= (3, 14):
    from compression import zstd
else:
    from backports import zstd

# cramjam, lz4 and lzf are imported by their readers: most logs are zstd (Spark 3's default)
# or plain, and every command's start-up would otherwise pay for all of them.

__all__ = [
    "DECODERS",
    "GZIP_MAGIC",
    "LZ4_BLOCK_MAGIC",
    "LZ4_FRAME_MAGIC",
    "READ_SIZE",
    "SNAPPY_MAGIC",
    "UTF8_BOM",
    "ZSTD_MAGIC",
    "Decoder",
    "StreamContext",
    "StreamProblem",
    "read_plain",
    "zstd",
]

READ_SIZE = 1024 * 1024
"""Bytes read from the compressed file at a time."""

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
LZ4_BLOCK_MAGIC = b"LZ4Block"
LZ4_FRAME_MAGIC = b"\x04\x22\x4d\x18"
SNAPPY_MAGIC = b"\x82SNAPPY\x00"
GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"


class StreamProblem(Exception):
    """A compressed stream ended early or is corrupt; raised after all decodable data was yielded.

    Not a :class:`~perfmodel.errors.PerfmodelError`: it never reaches the user as an exception,
    the reader turns it into a ``LogProblem`` and goes on with the next part.
    """

    def __init__(self, message: str, *, truncated: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.truncated = truncated
        """The stream just stops (a cut-off copy, a crash); otherwise its data is corrupt."""


@dataclass(slots=True)
class StreamContext:
    """What a reader needs to know besides the bytes: the file's name for messages, the piece
    size to aim at, and whether the writer may still be appending."""

    file: str
    chunk_size: int
    in_progress: bool


Decoder = Callable[[BinaryIO, StreamContext], Iterator[bytes]]


def read_plain(f: BinaryIO, ctx: StreamContext) -> Iterator[bytes]:
    """Uncompressed text, passed through in pieces of ``chunk_size`` without a leading BOM."""
    first = True
    while data := f.read(ctx.chunk_size):
        if first:
            data = data.removeprefix(UTF8_BOM)
            first = False
        yield data


def _truncated(ctx: StreamContext, what: str) -> StreamProblem:
    note = (
        " (expected for a log that is still being written)"
        if ctx.in_progress
        else "; events after the cut are missing"
    )
    return StreamProblem(f"{what}{note}", truncated=True)


# ---------------------------------------------------------------------------------------------
# zstd


class _Frames:
    """A zstd decoder that reads on across frames: the standard library's decompressor
    (`compression.zstd`, PEP 784) ends with its frame, so a new one takes whatever follows.
    The caller feeds it whole blocks or runs of whole frames (`ZstdFrameTracker`), so what
    one call returns stays bounded; a run of whole frames met between frames is decoded in
    one call (`zstd.decompress`), not a decompressor per frame (Spark flushes a frame every
    few kilobytes)."""

    __slots__ = ("_d", "_between")

    def __init__(self) -> None:
        self._d = zstd.ZstdDecompressor()
        self._between = True  # no frame begun: the next input starts one

    def decompress(self, data: bytes | memoryview, whole: bool = False) -> bytes:
        """What ``data`` decodes to; ``whole``: it is a run of whole frames."""
        if whole and self._between:
            return zstd.decompress(data)
        pieces = []
        while True:
            out = self._d.decompress(data)
            self._between = False
            if out:
                pieces.append(out)
            if not self._d.eof:
                break
            data = self._d.unused_data
            self._d = zstd.ZstdDecompressor()
            self._between = True
            if not data:
                break
        return b"".join(pieces)


def _redo_blocks(run: memoryview, decoded: int) -> Iterator[bytes]:
    """A run of whole frames whose batched decoding failed, decoded again block by block
    with a fresh decoder: yields what decodes before the damage, then raises."""
    tracker = ZstdFrameTracker()
    dobj = _Frames()
    data = bytes(run)
    start = 0
    for end in [*tracker.feed(data), len(data)]:
        if end == start:
            continue
        try:
            out = dobj.decompress(run[start:end])
        except zstd.ZstdError as e:
            raise _corrupt(decoded, f" ({e})") from None
        start = end
        if out:
            decoded += len(out)
            yield out
    raise _corrupt(decoded, " (a run of frames failed to decode as a whole)")


def _corrupt(decoded: int, detail: str) -> StreamProblem:
    return StreamProblem(
        f"zstd data is corrupt after {decoded:,} decompressed bytes{detail}; "
        "the events before it were read"
    )


def _zstd(f: BinaryIO, ctx: StreamContext) -> Iterator[bytes]:
    tracker = ZstdFrameTracker()
    dobj = _Frames()
    decoded = 0
    batch_blocks = max(1, ctx.chunk_size // ZSTD_MAX_BLOCK)  # pieces stay within chunk_size
    while data := f.read(READ_SIZE):
        view = memoryview(data)
        start = 0
        # Each call gets input that completes at most one block (the rest of the block begun in
        # the previous call, or a whole block), or a run of whole frames, then the partial
        # start of the next one.
        ends = tracker.feed(data, batch_blocks)
        whole = tracker.whole_runs
        if tracker.error is None:
            ends.append(len(data))
        for end in ends:
            if end == start:
                continue
            try:
                out = dobj.decompress(view[start:end], end in whole)
            except zstd.ZstdError as e:
                if end not in whole:
                    raise _corrupt(decoded, f" ({e})") from None
                yield from _redo_blocks(view[start:end], decoded)  # raises after the damage
            start = end
            if out:
                decoded += len(out)
                yield out
        if tracker.error is not None:
            raise _corrupt(decoded, f": {tracker.error}")
    if not tracker.at_boundary:
        raise _truncated(ctx, f"zstd stream is cut off inside a frame after {decoded:,} bytes")


# ---------------------------------------------------------------------------------------------
# lz4 (lz4-java LZ4BlockOutputStream)

_LZ4_HEADER = struct.Struct("<8sBiii")  # magic, token, compressed len, original len, checksum
_LZ4_METHOD_RAW = 0x10
_LZ4_METHOD_LZ4 = 0x20


def _lz4_block(f: BinaryIO, ctx: StreamContext) -> Iterator[bytes]:
    """lz4-java block stream: [LZ4Block][token][clen][olen][xxh32] payload, repeated.

    An all-zero block is lz4-java's end mark (written by ``close()``); more blocks may follow it
    when streams were concatenated, as lz4-java's reader allows. The xxhash32 checksums are not
    verified: no xxhash implementation is among the dependencies, and lz4's own decoder already
    rejects most damage.
    """
    import lz4.block

    offset = 0
    ended = False
    size = _LZ4_HEADER.size
    while header := f.read(size):
        start = offset
        if len(header) < size:
            raise _truncated(
                ctx, f"lz4 stream is cut off inside a block header at offset {start:,}"
            )
        magic, token, clen, olen, _checksum = _LZ4_HEADER.unpack(header)
        if magic != LZ4_BLOCK_MAGIC:
            raise StreamProblem(f"lz4 data is corrupt: no block header at offset {offset:,}")
        method, level = token & 0xF0, token & 0x0F
        if (
            method not in (_LZ4_METHOD_RAW, _LZ4_METHOD_LZ4)
            or olen < 0
            or clen < 0
            or olen > 1 << (10 + level)
            or (olen == 0) != (clen == 0)
            or (method == _LZ4_METHOD_RAW and olen != clen)
        ):
            raise StreamProblem(f"lz4 data is corrupt: invalid block header at offset {offset:,}")
        offset += size
        if olen == 0:
            ended = True
            continue
        ended = False
        payload = f.read(clen)
        if len(payload) < clen:
            raise _truncated(ctx, f"lz4 stream is cut off inside the block at offset {start:,}")
        offset += clen
        if method == _LZ4_METHOD_RAW:
            yield payload
            continue
        try:
            out = lz4.block.decompress(payload, uncompressed_size=olen)
        except lz4.block.LZ4BlockError as e:
            raise StreamProblem(
                f"lz4 data is corrupt in the block at offset {start:,}: {e}"
            ) from None
        if len(out) != olen:
            raise StreamProblem(f"lz4 data is corrupt in the block at offset {start:,}")
        yield out
    if offset and not ended and not ctx.in_progress:
        raise StreamProblem(
            "lz4 stream has no end mark: the writer never closed the file (Spark was killed, or "
            "the log was copied while being written); events after the last block may be missing",
            truncated=True,
        )


# ---------------------------------------------------------------------------------------------
# snappy (snappy-java SnappyOutputStream)

_SNAPPY_HEADER_SIZE = 16  # magic + version + compatible version
_SNAPPY_MAGIC_HEAD = struct.unpack(">i", SNAPPY_MAGIC[:4])[0]
_SNAPPY_MAX_CHUNK = 256 * 1024 * 1024
_INT_BE = struct.Struct(">i")


def _snappy(f: BinaryIO, ctx: StreamContext) -> Iterator[bytes]:
    """snappy-java stream: 16-byte header, then [int32 BE length][raw snappy block] chunks.

    A header in place of a chunk length starts a concatenated stream (snappy-java's reader
    accepts that, so Spark may produce it when appending).
    """
    import cramjam

    header = f.read(_SNAPPY_HEADER_SIZE)
    if len(header) < _SNAPPY_HEADER_SIZE:
        raise _truncated(ctx, "snappy stream is cut off inside its header")
    offset = _SNAPPY_HEADER_SIZE
    while raw_len := f.read(4):
        start = offset
        if len(raw_len) < 4:
            raise _truncated(ctx, f"snappy stream is cut off inside a chunk header at {start:,}")
        (n,) = _INT_BE.unpack(raw_len)
        if n == _SNAPPY_MAGIC_HEAD:
            rest = f.read(_SNAPPY_HEADER_SIZE - 4)
            if len(rest) < _SNAPPY_HEADER_SIZE - 4:
                raise _truncated(ctx, f"snappy stream is cut off inside a header at {offset:,}")
            if not (raw_len + rest).startswith(SNAPPY_MAGIC):
                raise StreamProblem(f"snappy data is corrupt: bad stream header at {offset:,}")
            offset += _SNAPPY_HEADER_SIZE
            continue
        if n < 0 or n > _SNAPPY_MAX_CHUNK:
            raise StreamProblem(f"snappy data is corrupt: invalid chunk length at {offset:,}")
        offset += 4
        data = f.read(n)
        if len(data) < n:
            raise _truncated(ctx, f"snappy stream is cut off inside the chunk at offset {start:,}")
        offset += n
        if not n:
            continue
        try:
            if cramjam.snappy.decompress_raw_len(data) > _SNAPPY_MAX_CHUNK:
                raise StreamProblem(f"snappy data is corrupt: implausible chunk size at {start:,}")
            out = bytes(cramjam.snappy.decompress_raw(data))
        except cramjam.DecompressionError as e:
            raise StreamProblem(f"snappy data is corrupt in the chunk at {start:,}: {e}") from None
        yield out


# ---------------------------------------------------------------------------------------------
# lzf (compress-lzf LZFOutputStream)

_LZF_UNCOMPRESSED = 0
_LZF_COMPRESSED = 1


def _lzf(f: BinaryIO, ctx: StreamContext) -> Iterator[bytes]:
    """compress-lzf chunks: ``ZV 0 len16 data`` (stored) or ``ZV 1 clen16 olen16 data``."""
    import lzf

    offset = 0
    while header := f.read(5):
        start = offset
        if len(header) < 5:
            raise _truncated(ctx, f"lzf stream is cut off inside a chunk header at {offset:,}")
        if header[:2] != b"ZV" or header[2] not in (_LZF_UNCOMPRESSED, _LZF_COMPRESSED):
            raise StreamProblem(f"lzf data is corrupt: no chunk header at offset {offset:,}")
        n = int.from_bytes(header[3:5], "big")
        offset += 5
        if header[2] == _LZF_UNCOMPRESSED:
            data = f.read(n)
            if len(data) < n:
                raise _truncated(ctx, f"lzf stream is cut off inside the chunk at offset {start:,}")
            offset += n
            yield data
            continue
        raw_olen = f.read(2)
        data = f.read(n)
        if len(raw_olen) < 2 or len(data) < n:
            raise _truncated(ctx, f"lzf stream is cut off inside the chunk at offset {start:,}")
        offset += 2 + n
        olen = int.from_bytes(raw_olen, "big")
        try:
            out = lzf.decompress(data, olen) if olen else b""
        except ValueError:
            out = None
        if out is None or len(out) != olen:
            raise StreamProblem(f"lzf data is corrupt in the chunk at offset {start:,}")
        yield out


# ---------------------------------------------------------------------------------------------
# gzip and LZ4 frame: not written by Spark, but what people get when they compress a log by hand.


def _gzip(f: BinaryIO, ctx: StreamContext) -> Iterator[bytes]:
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    in_member = False
    while data := f.read(READ_SIZE):
        while data:
            in_member = True
            try:
                out = d.decompress(data, ctx.chunk_size)
            except zlib.error as e:
                raise StreamProblem(f"gzip data is corrupt: {e}") from None
            if out:
                yield out
            if d.eof:  # end of a member; another may follow (concatenated gzip)
                data = d.unused_data
                d = zlib.decompressobj(16 + zlib.MAX_WBITS)
                in_member = False
                if data and not data.startswith(GZIP_MAGIC):
                    if data.strip(b"\x00"):
                        raise StreamProblem("gzip data is followed by trailing garbage")
                    data = b""
            else:
                data = d.unconsumed_tail
    if in_member:
        raise _truncated(ctx, "gzip stream is cut off")


def _lz4_frame(f: BinaryIO, ctx: StreamContext) -> Iterator[bytes]:
    import lz4.frame

    d = lz4.frame.LZ4FrameDecompressor()
    in_frame = False
    while data := f.read(READ_SIZE):
        in_frame = True
        while True:
            try:
                out = d.decompress(data, max_length=ctx.chunk_size)
            except RuntimeError as e:
                raise StreamProblem(f"lz4 frame data is corrupt: {e}") from None
            if out:
                yield out
            if d.eof:
                data = d.unused_data or b""
                d = lz4.frame.LZ4FrameDecompressor()
                in_frame = bool(data)
                if not data:
                    break
            elif d.needs_input:
                break
            else:
                data = b""
    if in_frame:
        raise _truncated(ctx, "lz4 frame stream is cut off")


DECODERS: dict[str, Decoder] = {
    "zstd": _zstd,
    "lz4": _lz4_block,
    "snappy": _snappy,
    "lzf": _lzf,
    "gzip": _gzip,
    "lz4-frame": _lz4_frame,
}
