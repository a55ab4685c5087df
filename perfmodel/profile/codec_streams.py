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
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

import zstandard

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


class _ZstdFrameTracker:
    """Follows zstd frame and block headers: where each block ends, and whether the input
    stopped between frames.

    ``zstandard``'s stream reader returns a clean EOF when its input ends inside a frame, so it
    cannot tell a truncated log from a complete one, and when one ``read`` runs into a damaged
    frame it raises and drops the output of the intact frames it decoded in the same call.
    Frame and block headers carry every size, so walking them costs a few operations per block
    (up to 128 KiB of output) and lets the decoder be fed one block at a time: the output per
    call stays bounded (no bomb can allocate gigabytes in one call) and an error loses nothing
    decoded before it. The decoding itself stays in C.
    """

    __slots__ = (
        "_state",
        "_skip",
        "_buf",
        "_checksum",
        "_unit_tail",
        "offset",
        "error",
        "whole_runs",
    )

    _MAGIC, _SKIPPABLE_SIZE, _FRAME_HEADER, _BLOCK = 0, 1, 2, 3
    _NEED = (4, 4, 1, 3)

    def __init__(self) -> None:
        self._state = self._MAGIC
        self._skip = 0  # bytes to pass over before the next header
        self._buf = b""  # a header split across reads
        self._checksum = False
        self._unit_tail = False  # the bytes being skipped end a block or a skippable frame
        self.offset = 0  # compressed bytes seen so far
        self.error: str | None = None
        self.whole_runs: set[int] = set()
        """Ends (in the data last fed) of the runs of whole frames `feed` found."""

    @property
    def at_boundary(self) -> bool:
        return self._state == self._MAGIC and not self._skip and not self._buf

    def feed(self, data: bytes, batch_blocks: int = 0) -> list[int]:
        """Offsets in ``data`` just after each block (or skippable frame) that ends in it.

        With ``batch_blocks``, a run of whole frames that lie entirely in ``data`` (up to that
        many blocks together) counts as one unit: its end is in ``whole_runs``, and its
        frames' own block ends are not listed.
        """
        ends: list[int] = []
        self.whole_runs = set()
        if self.error is not None:
            return ends
        pos, end = 0, len(data)
        while True:
            if self._skip:
                take = min(self._skip, end - pos)
                self._skip -= take
                pos += take
                if self._skip:
                    break
            if self._unit_tail:
                ends.append(pos)
                self._unit_tail = False
            if batch_blocks and self._state == self._MAGIC and not self._buf:
                runs = _whole_frame_runs(data, pos, end, batch_blocks)
                if runs:
                    ends.extend(runs)
                    self.whole_runs.update(runs)
                    pos = runs[-1]
            if pos >= end:
                break
            need = self._NEED[self._state] - len(self._buf)
            if end - pos < need:
                self._buf += data[pos:end]
                break
            header = self._buf + data[pos : pos + need]
            self._buf = b""
            pos += need
            self._header(header, self.offset + pos - len(header))
            if self.error is not None:
                break
        self.offset += end
        return ends

    def _header(self, h: bytes, at: int) -> None:
        state = self._state
        if state == self._MAGIC:
            magic = int.from_bytes(h, "little")
            if magic == 0xFD2FB528:
                self._state = self._FRAME_HEADER
            elif (magic & 0xFFFFFFF0) == 0x184D2A50:
                self._state = self._SKIPPABLE_SIZE
            else:
                self.error = f"no zstd frame starts at compressed offset {at:,}"
        elif state == self._SKIPPABLE_SIZE:
            self._skip = int.from_bytes(h, "little")
            self._unit_tail = True
            self._state = self._MAGIC
        elif state == self._FRAME_HEADER:
            fhd = h[0]
            if fhd & 0x08:
                self.error = f"invalid zstd frame header at compressed offset {at:,}"
                return
            single_segment = (fhd >> 5) & 1
            self._checksum = bool(fhd & 0x04)
            self._skip = (
                (0 if single_segment else 1)
                + (0, 1, 2, 4)[fhd & 0x03]
                + (single_segment, 2, 4, 8)[fhd >> 6]
            )
            self._state = self._BLOCK
        else:
            block = int.from_bytes(h, "little")
            block_type = (block >> 1) & 0x03
            if block_type == 3:
                self.error = f"invalid zstd block type at compressed offset {at:,}"
                return
            self._skip = 1 if block_type == 1 else block >> 3
            self._unit_tail = True
            if block & 1:  # last block of the frame
                self._skip += 4 if self._checksum else 0
                self._state = self._MAGIC


_ZSTD_FRAME_MAGIC = 0xFD2FB528
ZSTD_MAX_BLOCK = 128 * 1024
"""No zstd block regenerates more than this (Block_Maximum_Size), whatever its type."""
_DICT_ID_SIZE = (0, 1, 2, 4)
_CONTENT_SIZE_SIZE = (0, 2, 4, 8)


def _whole_frame_runs(data: bytes, pos: int, end: int, max_blocks: int) -> list[int]:
    """Ends of runs of whole, ordinary zstd frames from ``pos`` on, each run at most
    ``max_blocks`` blocks; empty where no whole frame starts at ``pos``.

    Spark's zstd-jni writes a small frame per flush (tens of thousands in a large log), so
    walking their headers one state at a time and decoding them one block a call cost more
    than the decoding itself. A frame that lies entirely in ``data`` can be walked in one
    go, and a run of them decoded in one call: its output is still bounded (no block
    regenerates more than 128 KiB), and since frames decode independently, damage inside a
    run is re-read block by block with a fresh decoder (`_redo_blocks`), so nothing decoded
    before it is lost. Anything else (a skippable frame, a frame cut by the end of ``data``,
    a reserved bit, a frame of more than ``max_blocks`` blocks) ends the walk and is left to
    the tracker's careful path.
    """
    runs: list[int] = []
    blocks = 0
    from_bytes = int.from_bytes
    while pos + 8 <= end and from_bytes(data[pos : pos + 4], "little") == _ZSTD_FRAME_MAGIC:
        fhd = data[pos + 4]
        if fhd & 0x08:
            break
        single_segment = (fhd >> 5) & 1
        size_flag = fhd >> 6
        p = (
            pos
            + 5
            + (0 if single_segment else 1)
            + _DICT_ID_SIZE[fhd & 0x03]
            + (_CONTENT_SIZE_SIZE[size_flag] if size_flag else single_segment)
        )
        checksum = 4 if fhd & 0x04 else 0
        n = 0
        while p + 3 <= end and n <= max_blocks:
            block = from_bytes(data[p : p + 3], "little")
            block_type = (block >> 1) & 0x03
            if block_type == 3:
                n = max_blocks + 1  # reserved: the careful path reports it
                break
            p += 3 + (1 if block_type == 1 else block >> 3)
            n += 1
            if block & 1:
                p += checksum
                break
        else:
            break  # cut by the end of the data, or too many blocks for one call
        if n > max_blocks or p > end:
            break
        if blocks and blocks + n > max_blocks:
            runs.append(pos)
            blocks = 0
        blocks += n
        pos = p
    if blocks:
        runs.append(pos)
    return runs


def _redo_blocks(run: memoryview, decoded: int) -> Iterator[bytes]:
    """A run of whole frames whose batched decoding failed, decoded again block by block
    with a fresh decoder: yields what decodes before the damage, then raises."""
    tracker = _ZstdFrameTracker()
    dobj = zstandard.ZstdDecompressor().decompressobj(read_across_frames=True)
    data = bytes(run)
    start = 0
    for end in [*tracker.feed(data), len(data)]:
        if end == start:
            continue
        try:
            out = dobj.decompress(run[start:end])
        except zstandard.ZstdError as e:
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
    tracker = _ZstdFrameTracker()
    dobj = zstandard.ZstdDecompressor().decompressobj(read_across_frames=True)
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
                out = dobj.decompress(view[start:end])
            except zstandard.ZstdError as e:
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
