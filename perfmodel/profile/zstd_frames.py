"""zstd frame and block headers: where each block ends, and which runs of frames are whole.

Reading a zstd log safely needs to know, in the compressed bytes, where one block ends and
the next begins (the reader in `perfmodel.profile.codec_streams` feeds its decoder up to
those points, so that damage loses nothing decoded before it and every call's output stays
bounded). This is byte-level header arithmetic only, nothing is decompressed here.
"""

from __future__ import annotations


class ZstdFrameTracker:
    """Follows zstd frame and block headers: where each block ends, and whether the input
    stopped between frames.

    A zstd stream reader returns a clean EOF when its input ends inside a frame, so it
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
                runs = whole_frame_runs(data, pos, end, batch_blocks)
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


def whole_frame_runs(data: bytes, pos: int, end: int, max_blocks: int) -> list[int]:
    """Ends of runs of whole, ordinary zstd frames from ``pos`` on, each run at most
    ``max_blocks`` blocks; empty where no whole frame starts at ``pos``.

    Spark's zstd-jni writes a small frame per flush (tens of thousands in a large log), so
    walking their headers one state at a time and decoding them one block a call cost more
    than the decoding itself. A frame that lies entirely in ``data`` can be walked in one
    go, and a run of them decoded in one call: its output is still bounded (no block
    regenerates more than 128 KiB), and since frames decode independently, damage inside a
    run is re-read block by block with a fresh decoder (`codec_streams._redo_blocks`), so
    nothing decoded before it is lost. Anything else (a skippable frame, a frame cut by the
    end of ``data``, a reserved bit, a frame of more than ``max_blocks`` blocks) ends the
    walk and is left to the tracker's careful path.
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
