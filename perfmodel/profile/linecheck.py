"""Checks on whole lines of a log that the event decoder cannot make itself.

Both run rarely enough to cost nothing: `repair_utf8` only on a piece of the log that holds a
byte outside ASCII, `is_cut_event` once per part, on a last line without a newline.
"""

from __future__ import annotations

import codecs

import msgspec


def is_cut_event(line: bytes) -> bool:
    """Whether a last line without a newline is JSON that stops in the middle.

    It tells a cut-off event (the normal end of a log whose writer died, or of a copy taken
    while it was written) from a damaged line, which the event decoder counts as such.
    """
    if not line.strip():
        return False
    try:
        msgspec.json.decode(line)
    except msgspec.DecodeError as e:
        return "truncated" in str(e)
    except (ValueError, RecursionError):  # invalid UTF-8, absurd nesting: damage, not a cut
        return False
    return False


def repair_utf8(data: bytes | memoryview) -> tuple[bytes | None, list[tuple[int, str]]]:
    """``data`` (whole lines) with the bytes that are not UTF-8 replaced by U+FFFD.

    Returns ``(None, [])`` when ``data`` is valid (the common case: no copy), else the
    repaired bytes and, per damaged line, its index in ``data`` (0-based) and a message. A bad
    byte sits inside a string value in practice (an application name, an error message
    written by a patched build), so the event around it is kept rather than dropped. Each bad
    line costs one decode from the previous bad byte to the next: linear in the data however
    much of it is damaged.
    """
    try:
        codecs.utf_8_decode(data, "strict", True)
        return None, []
    except UnicodeDecodeError as e:
        bad_at = e.start
    buf = bytes(data)
    kept: list[bytes] = []
    damaged: list[tuple[int, str]] = []
    pos = 0
    line = 0
    while True:
        line_start = buf.rfind(b"\n", pos, bad_at) + 1 or pos
        line_end = buf.find(b"\n", bad_at)
        if line_end < 0:
            line_end = len(buf)
        line += buf.count(b"\n", pos, line_start)
        kept.append(buf[pos:line_start])
        kept.append(buf[line_start:line_end].decode("utf-8", "replace").encode())
        damaged.append(
            (
                line,
                f"not valid UTF-8 (byte 0x{buf[bad_at]:02x} at column "
                f"{bad_at - line_start + 1}); replaced the bad bytes by U+FFFD",
            )
        )
        pos = line_end
        try:
            codecs.utf_8_decode(memoryview(buf)[pos:], "strict", True)
            break
        except UnicodeDecodeError as e:
            bad_at = pos + e.start
    kept.append(buf[pos:])
    return b"".join(kept), damaged
