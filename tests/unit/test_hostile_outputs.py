"""Issue 42, class 2: a writer replaces nothing but a regular file.

Every writer perfmodel has (rendered pages, JSON, fleet tables, model weights, corpus files,
bundles, the run store) is pointed, in turn, at every kind of thing a path can already hold.
Hypothesis draws the pairs. Whatever is there afterwards must be what was there before
(same kind, same link target, same content behind a link), unless it was a regular file
the writer documents replacing.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.atomic import OutputPathError, check_output, replacing, write_atomically
from perfmodel.errors import PerfmodelError
from perfmodel.fleet.store import write_table
from perfmodel.profile.record.bundle_write import staged_directory
from perfmodel.report import render_to_file
from perfmodel.runs.store import RunStore, StoreError
from tests.cli_runner import invoke_cli

KINDS = ["missing", "regular", "directory", "fifo", "device", "link_to_file", "link_to_dir"]
KINDS += ["dangling_link", "socket"]


def _plant(kind: str, path: Path, elsewhere: Path) -> None:
    """Put a thing of ``kind`` at ``path``; links point into ``elsewhere``."""
    if kind == "regular":
        path.write_text("theirs\n")
    elif kind == "directory":
        path.mkdir()
        (path / "inside").write_text("theirs\n")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        try:
            os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # /dev/null's numbers
        except PermissionError:
            pytest.skip("making a device node needs root")
    elif kind == "link_to_file":
        (elsewhere / "victim").write_text("victim\n")
        path.symlink_to(elsewhere / "victim")
    elif kind == "link_to_dir":
        path.symlink_to(elsewhere)
    elif kind == "dangling_link":
        path.symlink_to(elsewhere / "nothing-here")
    elif kind == "socket":
        import socket

        with socket.socket(socket.AF_UNIX) as s:
            s.bind(str(path))


def _snapshot(path: Path, elsewhere: Path) -> tuple[object, ...]:
    try:
        st_ = os.lstat(path)
    except FileNotFoundError:
        return ("missing",)
    link = os.readlink(path) if stat.S_ISLNK(st_.st_mode) else None
    victims = sorted((p.name, p.read_bytes()) for p in elsewhere.iterdir() if p.is_file())
    return (stat.S_IFMT(st_.st_mode), st_.st_rdev, link, victims)


def _table() -> pa.Table:
    from perfmodel.fleet.schema import RESULT_TABLES

    return RESULT_TABLES["errors"].empty_table()


WRITERS: dict[str, tuple[Callable[[Path], object], bool]] = {
    # name: (write to the path, whether an existing regular file is replaced)
    "render_to_file": (lambda p: render_to_file(p, lambda f: f.write("page")), True),
    "render_to_file/new": (
        lambda p: render_to_file(p, lambda f: f.write("page"), overwrite=False),
        False,
    ),
    "write_atomically": (lambda p: write_atomically(p, b"bytes"), True),
    "replacing": (lambda p: _via_replacing(p), True),
    "fleet table": (lambda p: _fleet_table(p), True),
}


def _via_replacing(path: Path) -> None:
    with replacing(path) as tmp:
        tmp.write_text("new")


def _fleet_table(path: Path) -> None:
    """A fleet table: the thing was planted at the name the table takes in its folder."""
    write_table(path.parent, "errors", _table())


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(KINDS), writer=st.sampled_from(sorted(WRITERS)))
def test_a_writer_replaces_only_a_regular_file(kind: str, writer: str) -> None:
    write, replaces = WRITERS[writer]
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        elsewhere = root / "elsewhere"
        elsewhere.mkdir()
        out = root / "out"
        out.mkdir()
        name = "errors.parquet" if writer == "fleet table" else "target.html"
        path = out / name
        _plant(kind, path, elsewhere)
        before = _snapshot(path, elsewhere)
        allowed = kind == "missing" or (kind == "regular" and replaces)
        if allowed:
            write(path)
            assert stat.S_ISREG(os.lstat(path).st_mode)
            assert path.read_bytes() != b"theirs\n"
        else:
            with pytest.raises(OutputPathError) as err:
                write(path)
            assert str(path) in str(err.value)
            assert _snapshot(path, elsewhere) == before
        # No temporary file is left beside the target.
        assert not [p for p in out.iterdir() if ".tmp" in p.name]


@pytest.mark.parametrize("kind", KINDS)
def test_a_bundle_replaces_only_an_empty_folder(kind: str, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = tmp_path / "bundle"
    _plant(kind, path, elsewhere)
    before = _snapshot(path, elsewhere)
    if kind == "missing":
        with staged_directory(path) as stage:
            (stage / "x").write_text("x")
        assert (path / "x").is_file()
        return
    with pytest.raises(PerfmodelError), staged_directory(path) as stage:
        (stage / "x").write_text("x")
    assert _snapshot(path, elsewhere) == before


@pytest.mark.parametrize("kind", KINDS)
def test_the_run_store_opens_only_a_regular_file(kind: str, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    path = tmp_path / "runs.sqlite"
    _plant(kind, path, elsewhere)
    before = _snapshot(path, elsewhere)
    if kind in ("missing", "link_to_file"):
        if kind == "link_to_file":
            RunStore(elsewhere / "victim2.sqlite").close()
            path.unlink()
            path.symlink_to(elsewhere / "victim2.sqlite")
        RunStore(path).close()
        return
    if kind == "regular":
        with pytest.raises(StoreError, match="not a usable run store"):
            RunStore(path)
    else:
        with pytest.raises(StoreError, match=str(path)):
            RunStore(path)
    assert _snapshot(path, elsewhere) == before


def test_reading_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "not" / "there" / "runs.sqlite"
    with pytest.raises(StoreError, match="no run store at"):
        RunStore(path, create=False)
    assert not (tmp_path / "not").exists()


def test_an_empty_output_path_is_named_as_such() -> None:
    with pytest.raises(OutputPathError, match="empty"):
        check_output("")


@pytest.mark.parametrize("kind", ["fifo", "directory", "link_to_file", "device"])
def test_report_refuses_before_reading_the_log(kind: str, tmp_path: Path) -> None:

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = tmp_path / "out.html"
    _plant(kind, target, elsewhere)
    before = _snapshot(target, elsewhere)
    result = invoke_cli(["report", "no-such.log", "-o", str(target)])
    assert result.exit_code == 2
    assert "replaces only regular files" in result.output
    assert _snapshot(target, elsewhere) == before


def test_runs_list_on_a_missing_store_creates_nothing(tmp_path: Path) -> None:

    store = tmp_path / "a" / "b" / "runs.sqlite"
    result = invoke_cli(["runs", "list", "--store", str(store)])
    assert result.exit_code == 2
    assert "no run store at" in result.output
    assert not (tmp_path / "a").exists()


@pytest.mark.skipif(not Path("/proc/version").exists(), reason="needs Linux's /proc")
def test_a_folder_that_takes_no_file_is_named_by_the_user_s_path() -> None:
    """``/proc`` takes no new file: the error names the path given, not the hidden temporary
    name the write goes through."""
    with pytest.raises(OutputPathError) as caught:
        write_atomically("/proc/version", "x")
    message = str(caught.value)
    assert message.startswith("/proc/version: cannot write a file in /proc")
    assert ".tmp-" not in message
