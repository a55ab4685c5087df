"""Files that appear whole or not at all, and that replace nothing but a regular file of ours.

Every file perfmodel writes goes through here. The content is written under a temporary name
and renamed over the target, so a reader (or a retry after a crash) sees the old file or the
complete new one, never a part, and a failure leaves no partial file behind. The temporary
name is a hidden sibling (same directory, so the rename is atomic; hidden, so directory scans
skip it), created exclusively, so nothing already at that name is followed or reused.

A rename replaces whatever is at the target. So before writing, and again just before the
rename, the target is checked (`check_output`): it must be missing or a regular file. A
device (``/dev/full``), a FIFO, a socket, a directory or a symbolic link is refused with an
`OutputPathError` naming it: renaming over a device would turn it into a file (as root), and
writing through a link would replace a file somewhere the user did not name. Folders perfmodel
writes into are checked the same way by `check_output_dir`: missing or a directory (a link to
a directory the user named is theirs to choose and is followed).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from perfmodel.errors import PerfmodelError


class OutputPathError(PerfmodelError):
    """An output path perfmodel will not write to: empty, a special file, a directory, a
    symbolic link, or an existing file a command does not replace."""


def describe_kind(mode: int) -> str:
    """What a file of ``mode`` (from `os.lstat`) is, for a message: "a device", ..."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a file"
    return "not a regular file"


def check_output(path: Path | str, *, overwrite: bool = True) -> Path:
    """``path`` as a `Path` if perfmodel may write a file there: missing, or a regular file
    (replaced only with ``overwrite``, which a command's help must say). Anything else raises
    `OutputPathError`; the link itself is judged, not what it points to."""
    if str(path) == "":
        raise OutputPathError("the output path is empty; name a file to write")
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path
    except NotADirectoryError:
        raise OutputPathError(f"{path}: a folder on the way is a file; name another path") from None
    if stat.S_ISREG(st.st_mode):
        if not overwrite:
            raise OutputPathError(f"{path} already exists; remove it or name a new file")
        return path
    what = describe_kind(st.st_mode)
    hint = "name a file in it" if stat.S_ISDIR(st.st_mode) else "name a regular file"
    raise OutputPathError(f"{path} is {what}; perfmodel replaces only regular files ({hint})")


def check_output_dir(path: Path | str) -> Path:
    """``path`` as a `Path` if perfmodel may write files into it: missing (it is made by
    `make_output_dir`) or a directory, possibly through a link the user named. A file,
    device, FIFO or dangling link raises `OutputPathError`."""
    if str(path) == "":
        raise OutputPathError("the output folder is empty; name a folder")
    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise OutputPathError(f"{path} is a link to nothing; name a folder") from None
        return path
    except NotADirectoryError:
        raise OutputPathError(f"{path}: a folder on the way is a file; name a folder") from None
    if not stat.S_ISDIR(st.st_mode):
        raise OutputPathError(f"{path} is {describe_kind(st.st_mode)}; name a folder to write into")
    return path


def make_output_dir(path: Path | str) -> Path:
    """`check_output_dir`, then make the folder and its parents if missing."""
    path = check_output_dir(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputPathError(f"{path}: a folder on the way is a file; name a folder") from None
    return path


@contextmanager
def replacing(path: Path | str, *, overwrite: bool = True) -> Iterator[Path]:
    """A temporary path to write ``path``'s new content to; it replaces ``path`` when the
    block ends without an exception and is removed otherwise. ``path`` is checked by
    `check_output` first and again before the rename (something may have appeared there
    meanwhile). The temporary file exists, empty and private to this process's user, when
    the block starts; the suffix is kept, for writers that choose a format by it
    (matplotlib)."""
    path = check_output(path, overwrite=overwrite)
    make_output_dir(path.parent)
    tmp = path.with_name(f".{path.stem}.tmp-{os.getpid()}{path.suffix}")
    try:
        fd = _create(tmp, path)
    except FileExistsError:
        # Left by a killed run of a process with this pid; a regular file is ours to drop.
        if not stat.S_ISREG(os.lstat(tmp).st_mode):
            raise OutputPathError(f"{tmp} is in the way and is not a regular file") from None
        tmp.unlink()
        fd = _create(tmp, path)
    os.close(fd)
    try:
        yield tmp
        check_output(path, overwrite=overwrite)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _create(tmp: Path, path: Path) -> int:
    """Open the new temporary file ``tmp`` for ``path``; a folder that takes no new file
    (``/proc``, read-only, full) is an `OutputPathError` naming ``path``, the user's word,
    not the temporary name."""
    try:
        return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    except FileExistsError:
        raise
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise OutputPathError(f"{path}: cannot write a file in {path.parent} ({reason})") from None


def write_atomically(path: Path | str, data: str | bytes, *, overwrite: bool = True) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` through `replacing`."""
    with replacing(path, overwrite=overwrite) as tmp:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
