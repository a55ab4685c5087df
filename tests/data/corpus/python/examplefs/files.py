"""File helpers (test input written for perfmodel's corpus tests)."""

import os


def copy_file(src: str, dst: str, bufsize: int = 1 << 16) -> int:
    """Copy *src* to *dst*; return the number of bytes copied."""
    total = 0
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        while chunk := fin.read(bufsize):
            fout.write(chunk)
            total += len(chunk)
        os.fsync(fout.fileno())
    return total


def remove_tree(path: str) -> None:
    for root, dirs, files in os.walk(path, topdown=False):
        for name in files:
            os.unlink(os.path.join(root, name))
        for name in dirs:
            os.rmdir(os.path.join(root, name))
    os.rmdir(path)
