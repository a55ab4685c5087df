"""Shared pieces of the damaged-input tests: the command worker, the
real logs they start from, and the checks every command's answer must pass.

Their Hypothesis settings are the profiles of tests/conftest.py: 12 examples per test, 400
under ``long`` (``HYPOTHESIS_PROFILE=long``, tens of minutes, a search before a release); a
fixed draw under ``ci``.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, SHARED_EVENTLOGS, TEST_DATA

HANG_TIMEOUT_S = 120.0
"""Longest one command may take before it counts as hung: generous (a loaded CI machine is
slow), so only a real hang trips it, never a slow but finishing run."""

WORKER_MEMORY_LIMIT = 2 << 30
"""Address space of the command worker (`resource.RLIMIT_AS`): a diagnosis of any shared
log peaks below 500 MB of it; growth sized by a number in the input, not by the data, meets
a MemoryError (reported as a crash) long before it could exhaust the machine."""

PLAIN_LOG = "application_1628109047826_1317105"
"""A real Spark 2 log (YARN, 63 KB): small enough to analyse many damaged copies quickly."""
SPARK1_LOG = "local-1422981780767"
ZSTD_LOG = "spark2-eventlog.zstd"
ROLLING_LOG = TEST_DATA / "eventlogs" / "eventlog_v2_wordcount-rolling"


def shared_log(name: str) -> Path:
    path = SHARED_EVENTLOGS / name
    if not path.exists():
        pytest.skip(f"shared event log {path} not found (../shared is absent)")
    return path


class Worker:
    """The client side of ``tests/fuzz_worker.py``: one request at a time, with a hang bound."""

    def __init__(self, state_dir: Path, memory_limit: int = WORKER_MEMORY_LIMIT) -> None:
        env = {**os.environ, "PERFMODEL_STATE_DIR": str(state_dir), "PYTHONPATH": str(REPO)}
        env["PERFMODEL_TEST_MEMORY_LIMIT"] = str(memory_limit)
        env.pop("COLUMNS", None)
        self._env = env
        self._proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, str(REPO / "tests" / "fuzz_worker.py")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=self._env,
                cwd=REPO,
            )
        return self._proc

    def request(self, payload: dict[str, Any], timeout_s: float = HANG_TIMEOUT_S) -> Any:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(payload) + "\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
        if not ready:
            self.close()
            pytest.fail(f"hung: {payload} gave no answer within {timeout_s:.0f} s")
        line = proc.stdout.readline()
        if not line:
            self.close()
            pytest.fail(f"the worker died running {payload}")
        return json.loads(line)

    def cli(self, *argv: str | Path) -> dict[str, Any]:
        return self.request({"argv": [str(a) for a in argv]})

    def quality(self, path: Path) -> dict[str, Any]:
        return self.request({"quality": str(path)})

    def close(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None


def worker_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    worker = Worker(tmp_path_factory.mktemp("fuzz-state"))
    yield worker
    worker.close()


def check_calm(answer: dict[str, Any], argv: tuple[str | Path, ...]) -> None:
    """Exit 0 or 2, never a traceback; an exit 2 says what was wrong in an ``error:`` line;
    ``--json`` output that claims success is strict JSON."""
    shown = " ".join(str(a) for a in argv)
    assert answer["crash"] is None, f"{shown} crashed:\n{answer['traceback']}"
    assert "Traceback (most recent call last)" not in answer["output"], shown
    assert answer["exit_code"] in (0, 2), f"{shown} exited {answer['exit_code']}"
    if answer["exit_code"] == 2:
        assert re.search(r"error", answer["output"], re.IGNORECASE), (
            f"{shown} failed without saying why: {answer['output'][-500:]!r}"
        )
    elif "--json" in argv:
        assert answer["json"] is not None, f"{shown}: --json output is not strict JSON"


def counts(answer: dict[str, Any]) -> dict[str, int]:
    """The damage counts of a `Worker.quality` answer (a refused log has none)."""
    assert "crash" not in answer, answer.get("traceback")
    return answer["quality"]["counts"] if "quality" in answer else {}


def lines_of(data: bytes) -> list[bytes]:
    return data.split(b"\n")
