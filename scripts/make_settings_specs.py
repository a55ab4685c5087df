"""Write the settings study's specs, experiments/settings/*.toml, from the workload specs.

The settings study (scripts/settings_study.sh) runs each workload of experiments/*.toml under
Spark settings instead of resources, on one machine shape (local[2], 2g heap), and predicts
every run from every other run's bare event log:

* SQL workloads: spark.sql.shuffle.partitions from far too few to far too many (1, 8, 64,
  400, 2000), each with AQE on and off; broadcast joins disabled; file splits 4× smaller
  and larger than the 16m the study sets everywhere (the inputs are tens of MB: Spark's
  128m default would make one split per file whatever the setting);
* RDD workloads (the shuffle count of an RDD shuffle is spark.default.parallelism):
  spark.default.parallelism 2, 8, 32, 200 and 1000 (a PySpark task costs a Python worker
  round trip: 2,000 of them per stage ran past the 30-minute timeout in a smoke run).

Run from the repository root: ``.venv/bin/python scripts/make_settings_specs.py``. The specs
are written, not edited by hand, so the study's design is this file.
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "experiments"
OUT = SOURCE / "settings"

RDD = {"wordcount", "pagerank", "inverted_index"}
"""Workloads whose shuffles are RDD shuffles (their count is spark.default.parallelism)."""
PARAMS = {"tpch": {"sf": "0.5", "queries": "1,3,5,10,12,18"}}
"""Smaller inputs where thirteen runs at the workload's usual size would take too long: TPC-H
at scale factor 0.5, six of its queries (an aggregation, and joins of three to six tables, where
broadcast and shuffle partitions matter), as 2,000 partitions without AQE make each of its
shuffles 2,000 tasks."""
PARTITIONS = (1, 8, 64, 400, 2000)
PARALLELISM = (2, 8, 32, 200, 1000)
BASE_CONF = {"spark.default.parallelism": "4", "spark.sql.files.maxPartitionBytes": "16m"}
"""Every SQL config's: the resource study's parallelism, and a split size the inputs feel."""


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value)


def _config(name: str, conf: dict[str, str], partitions: int | None = None) -> str:
    lines = ["[[configs]]", f"name = {_toml_value(name)}", 'master = "local[2]"']
    lines.append('driver_memory = "2g"')
    if partitions is not None:
        lines.append(f"shuffle_partitions = {partitions}")
    table = ", ".join(f"{_toml_value(k)} = {_toml_value(v)}" for k, v in sorted(conf.items()))
    lines.append(f"conf = {{ {table} }}")
    return "\n".join(lines)


def configs(stem: str) -> list[str]:
    """The study's configurations of one workload."""
    if stem in RDD:
        return [
            _config(f"parallelism={n}", {"spark.default.parallelism": str(n)}) for n in PARALLELISM
        ]
    out = []
    for n in PARTITIONS:
        for aqe in ("true", "false"):
            conf = BASE_CONF | {"spark.sql.adaptive.enabled": aqe}
            out.append(_config(f"partitions={n} aqe={'on' if aqe == 'true' else 'off'}", conf, n))
    out.append(
        _config(
            "partitions=64 no-broadcast",
            BASE_CONF | {"spark.sql.autoBroadcastJoinThreshold": "-1"},
            64,
        )
    )
    out.append(
        _config(
            "partitions=64 splits=4m", BASE_CONF | {"spark.sql.files.maxPartitionBytes": "4m"}, 64
        )
    )
    out.append(
        _config(
            "partitions=64 splits=64m", BASE_CONF | {"spark.sql.files.maxPartitionBytes": "64m"}, 64
        )
    )
    return out


def spec(path: Path) -> str:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    stem = path.stem
    params = dict(data.get("params", {})) | PARAMS.get(stem, {})
    prepare = [w.replace("{spec_dir}/", "{spec_dir}/../") for w in data.get("prepare", [])]
    lines = [
        f"# Settings study (scripts/settings_study.sh): {data['name']} under Spark settings.",
        "# Written by scripts/make_settings_specs.py from experiments/" + path.name + ";",
        "# edit that script, not this file.",
        f"name = {_toml_value('settings-' + data['name'])}",
        f"workload = {_toml_value(data.get('workload', data['name']))}",
        f"description = {_toml_value(data.get('description', '') + ' (settings study)')}",
        f"script = {_toml_value('../' + data['script'])}",
        f"args = {_toml_value(data.get('args', []))}",
        f"prepare = {_toml_value(prepare)}",
        'data_dir = "../../build/experiments/data"',
        "repetitions = 1",
        f"timeout_s = {int(data.get('timeout_s', 600)) * 3}",
        "",
        "[params]",
        *(f"{k} = {_toml_value(str(v))}" for k, v in params.items()),
        "",
        "[record]",
        "# Predicted from bare event logs: no stack samplers.",
        "jfr = false",
        "pyspy = false",
        "",
    ]
    return "\n".join(lines) + "\n" + "\n\n".join(configs(stem)) + "\n"


def main() -> int:
    OUT.mkdir(exist_ok=True)
    for path in sorted(SOURCE.glob("*.toml")):
        (OUT / path.name).write_text(spec(path), encoding="utf-8")
        print(OUT / path.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
