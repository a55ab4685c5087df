"""The overhead benchmark's statistics and option parsing (the runs themselves are not tested:
they take minutes and measure, they do not check)."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "record_overhead.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("record_overhead", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["record_overhead"] = module
    spec.loader.exec_module(module)
    return module


def test_variant_words_split_into_options_and_environment(bench: ModuleType) -> None:
    name, (options, env) = bench.variant_options(
        "full25=JAVA_HOME=/usr/lib/jvm/x --no-pyspy --native-interval-ms=20"
    )
    assert name == "full25"
    assert options == ["--no-pyspy", "--native-interval-ms=20"]
    assert env == {"JAVA_HOME": "/usr/lib/jvm/x"}
    assert bench.variant_options("plain") == ("plain", ([], {}))


def test_rotation_visits_every_variant_in_every_round(bench: ModuleType) -> None:
    names = ["plain", "a", "b"]
    orders = [bench.rotation(names, i) for i in range(6)]
    assert all(sorted(order) == sorted(names) for order in orders)
    assert len({tuple(order) for order in orders}) > 1
    # Each variant runs first in some round, so no variant always follows the same one.
    assert {order[0] for order in orders} == set(names)


def test_median_interval_is_order_statistics(bench: ModuleType) -> None:
    assert bench.median_interval([0.01] * 5) is None  # too few for 95%
    values = [float(v) for v in range(1, 25)]  # 24 pairs, as in docs/recording-overhead.md
    low, high = bench.median_interval(values)
    assert (low, high) == (7.0, 18.0)  # k = 7: P(Bin(24, 1/2) < 7) = 0.0113 <= 0.025


def test_part_variants_reject_unknown_parts_and_plain_options(bench: ModuleType) -> None:
    def args(**given: object) -> argparse.Namespace:
        return argparse.Namespace(**({"only": "", "variant": [], "plain_variant": []} | given))

    plains, variants = bench.part_variants(
        args(only="full", variant=["v=X=1 --no-jfr"], plain_variant=["p=X=1"])
    )
    assert plains == {"plain": {}, "p": {"X": "1"}}
    assert variants == {"full": ([], {}), "v": (["--no-jfr"], {"X": "1"})}
    with pytest.raises(SystemExit, match="unknown part"):
        bench.part_variants(args(only="fulll"))
    with pytest.raises(SystemExit, match="only VAR=value"):
        bench.part_variants(args(plain_variant=["p=--no-jfr"]))
