"""Files that appear whole or not at all: written under a temporary name, then renamed.

A reader (or a retry after a crash) sees the old file or the complete new one, never a
part, and a failure leaves no partial file behind. The temporary name is a hidden sibling
(same directory, so the rename is atomic; hidden, so directory scans skip it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path to write ``path``'s new content to; it replaces ``path`` when the
    block ends without an exception and is removed otherwise. The suffix is kept, for
    writers that choose a format by it (matplotlib)."""
    tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomically(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through `replacing`."""
    with replacing(path) as tmp:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
