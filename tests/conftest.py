"""Shared test helpers: where the real data lives, and a quiet, isolated environment."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SHARED_EVENTLOGS = SHARED / "data" / "eventlogs"
TEST_DATA = REPO / "tests" / "data"
EXAMPLE_LOG = REPO / "examples" / "eventlogs" / "etl-local2.zstd"
BENCHMARKS = REPO / "benchmarks"


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Keep tests from reading or overwriting the user's remembered profile."""
    monkeypatch.setenv("PERFMODEL_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    yield


def shared_eventlogs() -> Path:
    """The shared real event logs, or a clean skip when ../shared is not checked out."""
    if not SHARED_EVENTLOGS.is_dir():
        pytest.skip(f"shared event logs not found at {SHARED_EVENTLOGS} (../shared is absent)")
    return SHARED_EVENTLOGS


def shared_entries() -> list[str]:
    """Names of the shared logs (files and rolling dirs), for parametrisation."""
    if not SHARED_EVENTLOGS.is_dir():
        return []
    return sorted(p.name for p in SHARED_EVENTLOGS.iterdir() if p.name != "SOURCES.md")


os.environ.setdefault("PYSPARK_PYTHON", sys.executable)


def _load_benchmark(name: str) -> ModuleType:
    """A script of benchmarks/ as a module, registered under its name (the scripts import each
    other by name, as when run from that directory)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def job_cpu() -> ModuleType:
    """benchmarks/job_cpu.py."""
    return _load_benchmark("job_cpu")


@pytest.fixture(scope="module")
def bench(job_cpu: ModuleType) -> ModuleType:
    """benchmarks/record_overhead.py; its imports of job_cpu find the one loaded here."""
    return _load_benchmark("record_overhead")
