"""Damaged copies of a real profile bundle through every command that reads bundles.

The bundle is made by `perfmodel profile` from a real event log and a real py-spy
recording. Every field of its manifest gets a value of the wrong JSON type (each must be
refused naming the field), and Hypothesis damages the manifest text, the Parquet tables and
the event log inside. Every command must stay calm (`fuzz_support.check_calm`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import RECORD_JOBS
from tests.fuzz_support import PLAIN_LOG, Worker, check_calm, shared_log, worker_fixture
from tests.schema_paths import wrong_value

worker = pytest.fixture(scope="module")(worker_fixture)

BUNDLE_COMMANDS: tuple[tuple[str, ...], ...] = (
    ("diagnose",),
    ("diagnose", "--json"),
    ("predict", "--cores", "2", "--json"),
    ("predict", "--sweep", "cores=1,2"),
    ("flame",),
    ("flame", "--stage", "0"),
)


@pytest.fixture(scope="module")
def pristine(worker: Worker, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("pristine") / "bundle"
    pyspy = RECORD_JOBS.parent / "record" / "pyspy-busy.json"
    answer = worker.cli("profile", shared_log(PLAIN_LOG), "--pyspy", pyspy, "--out", out)
    assert answer["exit_code"] == 0, answer
    return out


@pytest.fixture
def bundle(pristine: Path, tmp_path: Path) -> Iterator[Path]:
    copy = tmp_path / "bundle"
    shutil.copytree(pristine, copy)
    yield copy
    shutil.rmtree(copy, ignore_errors=True)


def run_bundle_commands(w: Worker, bundle: Path) -> list[dict[str, Any]]:
    answers = []
    for command in BUNDLE_COMMANDS:
        argv = (command[0], bundle, *command[1:])
        answer = w.cli(*argv)
        check_calm(answer, argv)
        answers.append(answer)
    logs = sorted((bundle / "eventlog").glob("*")) if (bundle / "eventlog").is_dir() else []
    if logs:
        argv = ("profile", logs[0], "--out", bundle.parent / "reprofiled")
        check_calm(w.cli(*argv), argv)
        shutil.rmtree(bundle.parent / "reprofiled", ignore_errors=True)
    return answers


def _manifest_fields(manifest: dict[str, Any]) -> list[tuple[str | int, ...]]:
    paths: list[tuple[str | int, ...]] = [(k,) for k in manifest if k != "format"]
    for i, rec in enumerate(manifest.get("recordings", [])):
        paths += [("recordings", i, k) for k in rec]
    return paths


def test_every_manifest_field_with_a_wrong_type_is_refused_by_name(
    worker: Worker, pristine: Path, tmp_path: Path
) -> None:
    manifest = json.loads((pristine / "manifest.json").read_text())
    fields = _manifest_fields(manifest)
    assert len(fields) > 20 and any(p[0] == "recordings" for p in fields)
    for path in fields:
        bundle = tmp_path / "b"
        shutil.rmtree(bundle, ignore_errors=True)
        shutil.copytree(pristine, bundle)
        damaged = json.loads((pristine / "manifest.json").read_text())
        target = damaged
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = wrong_value(target[path[-1]])
        (bundle / "manifest.json").write_text(json.dumps(damaged))
        for command in (("diagnose",), ("flame",), ("predict", "--cores", "2")):
            argv = (command[0], bundle, *command[1:])
            answer = worker.cli(*argv)
            check_calm(answer, argv)
            name = ".".join(str(p) for p in path).replace(".0.", "[0].")
            if path[0] in ("format_version",):
                assert answer["exit_code"] == 2
            elif answer["exit_code"] == 2:
                assert name in answer["output"] or path[-1] in answer["output"], (
                    f"{argv} did not name the field {name}: {answer['output'][-400:]}"
                )
            else:  # the field is not one this command reads... but the manifest is checked
                pytest.fail(f"{argv} accepted a manifest with a wrong {name}")


@given(data=st.data())
def test_damaged_bundle_files(
    worker: Worker, pristine: Path, tmp_path: Path, data: st.DataObject
) -> None:
    bundle = tmp_path / "bundle"  # a fresh copy per example (fixtures run once per test)
    shutil.rmtree(bundle, ignore_errors=True)
    shutil.copytree(pristine, bundle)
    target = data.draw(
        st.sampled_from(
            ["manifest.json", "samples.parquet", "task_spans.parquet", "eventlog", "raw"]
        )
    )
    how = data.draw(st.sampled_from(["bit_flips", "truncate", "delete", "replace"]))
    if target == "eventlog":
        path = next((bundle / "eventlog").iterdir())
    elif target == "raw":
        path = next((bundle / "raw" / "pyspy").glob("*.json"))
    else:
        path = bundle / target
    if how == "delete":
        path.unlink()
    elif how == "replace":
        path.write_bytes(data.draw(st.sampled_from([b"", b"[]", b"null", b'{"format": 1}'])))
    else:
        body = bytearray(path.read_bytes())
        if how == "truncate":
            del body[data.draw(st.integers(0, len(body) - 1)) :]
        else:
            for _ in range(data.draw(st.integers(1, 6))):
                body[data.draw(st.integers(0, len(body) - 1))] ^= 1 << data.draw(st.integers(0, 7))
        path.write_bytes(bytes(body))
    run_bundle_commands(worker, bundle)


def test_the_pristine_bundle_works(worker: Worker, bundle: Path) -> None:
    answers = run_bundle_commands(worker, bundle)
    # The py-spy recording is not of this application, so no stage has samples of its own.
    *whole, by_stage = answers
    assert all(a["exit_code"] == 0 for a in whole), [a["output"][-300:] for a in whole]
    assert by_stage["exit_code"] == 2 and "no samples attributed" in by_stage["output"]
    # A stage the application does not have is named as such, not as one without samples.
    missing = worker.cli("flame", bundle, "--stage", "99999")
    assert missing["exit_code"] == 2 and "has no stage 99999" in missing["output"]
