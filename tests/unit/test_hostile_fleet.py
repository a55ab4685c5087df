"""Issue 42, class 7: fleet discovery accounts for every entry, and totals count sanely.

Hypothesis builds folder trees out of every kind of entry a log folder can hold (logs,
logs in sub-folders and date folders, dangling links, link loops, links back to a parent,
FIFOs, links to devices, empty folders named like logs, listings that list themselves,
second names of a log) and checks that discovery ends, never opens a FIFO, and puts every
entry it met either among the logs, among the `Unusable` (an ``errors`` row each), or under
a documented skip. Totals: one application in several files counts once, and a log
claiming a huge core count cannot dominate the fleet's core-hours.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from perfmodel.fleet.discover import MAX_DEPTH, FleetInputError, walk_inputs
from perfmodel.fleet.schema import RESULT_TABLES, Table, table_from_rows
from perfmodel.fleet.summary import mark_duplicates, summarise

KINDS = [
    "log",
    "dangling",
    "loop",
    "fifo",
    "device_link",
    "empty_loglike_dir",
    "parent_link",
    "second_name",
    "hidden",
]

# What each kind must become: a log path, an errors row of that kind, or skipped.
EXPECT = {
    "log": "log",
    "dangling": "dangling_link",
    "loop": "link_loop",
    "fifo": "not_a_regular_file",
    "device_link": "not_a_regular_file",
    "empty_loglike_dir": "not_a_log",
    "parent_link": "skip",  # a second way into a folder already walked
    "second_name": "skip",  # a second name of a log already found
    "hidden": "skip",
}


def _make(kind: str, folder: Path, i: int, first_log: list[Path]) -> Path:
    name = f"e{i:03d}-{kind}"
    p = folder / name
    if kind == "log":
        p = folder / f"app-{i:03d}.zstd"
        p.write_bytes(b"not really compressed")
        first_log.append(p)
    elif kind == "dangling":
        p.symlink_to(folder / "nowhere")
    elif kind == "loop":
        p.symlink_to(folder / (name + "-b"))
        (folder / (name + "-b")).symlink_to(p)
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "device_link":
        p.symlink_to("/dev/zero")
    elif kind == "empty_loglike_dir":
        p = folder / f"application_{i:04d}_0001"
        p.mkdir()
    elif kind == "parent_link":
        p.symlink_to(folder)
    elif kind == "second_name":
        if not first_log:
            return _make("log", folder, i, first_log)
        p.symlink_to(first_log[0])
    elif kind == "hidden":
        p = folder / f".hidden-{i}"
        p.write_text("x")
    return p


tree = st.lists(
    st.tuples(st.integers(min_value=0, max_value=3), st.sampled_from(KINDS)),
    min_size=1,
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(entries=tree)
def test_every_entry_is_a_log_an_errors_row_or_a_documented_skip(
    entries: list[tuple[int, str]],
) -> None:
    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "logs"
        folders = [root, root / "attempt-1", root / "2026-11-01" / "attempt-2", root / "x" / "y"]
        for f in folders:
            f.mkdir(parents=True, exist_ok=True)
        made: list[tuple[str, Path]] = []
        logs: list[Path] = []
        for i, (where, kind) in enumerate(entries):
            p = _make(kind, folders[where], i, logs)
            kind = "log" if p.name.startswith("app-") else kind
            made.append((kind, p))
            if kind == "loop":
                made.append((kind, p.with_name(p.name + "-b")))
        paths, unusable = walk_inputs([str(root)])
        refused = {u.path: u.kind for u in unusable}
        found = set(paths)
        for kind, p in made:
            want = EXPECT[kind]
            if want == "log":
                assert str(p.resolve()) in found, (kind, p)
            elif want == "skip":
                assert str(p) not in refused, (kind, p)
            else:
                assert refused.get(str(p)) == want, (kind, p, refused)
        # Nothing else is reported: every errors row is one of the entries made.
        assert set(refused) <= {str(p) for _, p in made}
        assert len(paths) == len(found)  # each log once


def test_a_folder_deeper_than_the_limit_is_an_errors_row(tmp_path: Path) -> None:
    deep = tmp_path
    for i in range(MAX_DEPTH + 2):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "app-1.zstd").write_bytes(b"x")
    paths, unusable = walk_inputs([str(tmp_path)])
    assert paths == []
    assert [u.kind for u in unusable] == ["too_deep"]


def test_a_listing_that_lists_itself_is_read_once(tmp_path: Path) -> None:
    log = tmp_path / "app-1.zstd"
    log.write_bytes(b"x")
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(f"{b}\n{log}\n")
    b.write_text(f"{a}\n{tmp_path / 'missing.zstd'}\n")
    paths, unusable = walk_inputs([str(a)])
    assert paths == [str(log.resolve())]
    assert sorted((Path(u.path).name, u.kind) for u in unusable) == [
        ("a.txt", "listing_loop"),
        ("missing.zstd", "missing"),
    ]


def test_a_system_file_in_a_listing_is_a_log_candidate_not_a_listing(tmp_path: Path) -> None:
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/bin/sh\n")
    listing = tmp_path / "list.txt"
    listing.write_text(f"{passwd}\n")
    paths, unusable = walk_inputs([str(listing)])
    assert paths == [str(passwd.resolve())]  # analysed (an errors row), its lines never paths
    assert unusable == []


def test_a_missing_command_line_input_is_still_an_error() -> None:
    with pytest.raises(FleetInputError):
        walk_inputs(["/nonexistent/perfmodel/logs"])


def _apps(rows: list[dict[str, Any]]) -> Table:
    return table_from_rows(rows, RESULT_TABLES["apps"])


def _tables(apps: Table) -> dict[str, Table]:
    from perfmodel.fleet.regress import find_regressions

    tables = {name: schema.empty_table() for name, schema in RESULT_TABLES.items()}
    tables["apps"] = apps
    tables["regressions"] = find_regressions(apps, tables["stages"])
    return tables


def _row(path: str, app_id: str | None, held: float) -> dict[str, Any]:
    return {
        "log_path": path,
        "log_size": 1,
        "log_mtime_ns": 1,
        "app_id": app_id,
        "attempt": None,
        "held_core_hours": held,
        "wasted_core_hours": held / 2,
        "duration_s": 60.0,
        "complete": True,
    }


@settings(max_examples=100, deadline=None)
@given(copies=st.lists(st.integers(min_value=1, max_value=5), min_size=1, max_size=8))
def test_one_application_in_several_files_counts_once(copies: list[int]) -> None:
    rows = [
        _row(f"/logs/{app}-{c}.zstd", f"app-{app}", 1.0 + app)
        for app, n in enumerate(copies)
        for c in range(n)
    ]
    s = summarise(_tables(_apps(rows)), analysed_now=len(rows), skipped=0)
    assert s.applications == len(copies)
    assert s.duplicate_logs == sum(copies) - len(copies)
    assert s.held_core_hours == pytest.approx(sum(1.0 + app for app in range(len(copies))))
    assert all(d["same_as"] != d["log_path"] for d in s.duplicates)
    assert s.logs == len(rows)
    marked = mark_duplicates(_apps(rows)).column("duplicate_of")
    assert sum(m is not None for m in marked) == s.duplicate_logs


def test_logs_without_an_application_id_are_never_merged() -> None:
    rows = [_row("/logs/a", None, 1.0), _row("/logs/b", None, 1.0)]
    s = summarise(_tables(_apps(rows)), analysed_now=2, skipped=0)
    assert s.applications == 2 and s.duplicate_logs == 0


def test_unusable_entries_are_named_by_absolute_path_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs from two folders name the same dangling link alike (as logs are named), so its
    errors row is not stored twice under two relative names."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "gone.zstd").symlink_to(tmp_path / "nowhere")
    names = []
    for cwd, arg in ((tmp_path, "logs"), (tmp_path / "logs", ".")):
        monkeypatch.chdir(cwd)
        _, unusable = walk_inputs([arg])
        names.append([u.path for u in unusable])
    assert names[0] == names[1] == [str(tmp_path / "logs" / "gone.zstd")]
