"""Write the settings study's specs, experiments/settings/*.toml, from the workload specs.

The settings study (scripts/settings_study.sh) runs each workload of experiments/*.toml under
Spark settings instead of resources, on one machine shape (local[2], 2g heap), and predicts
every run from every other run's bare event log:

* SQL workloads: spark.sql.shuffle.partitions from far too few to far too many (1, 8, 64,
  200, 400, 2000), each with AQE on and off; broadcast joins disabled; file splits 4× smaller
  and larger than the 16m the study sets everywhere (the inputs are tens of MB: Spark's
  128m default would make one split per file whatever the setting);
* RDD workloads (the shuffle count of an RDD shuffle is spark.default.parallelism):
  spark.default.parallelism 2, 8, 32, 200 and 1000 (a PySpark task costs a Python worker
  round trip: 2,000 of them per stage ran past the 30-minute timeout in a smoke run).

The workloads are those of experiments/*.toml, and those of `EXTRA` (specs of other studies
whose workloads run on one machine as well). Run from the repository root:
``.venv/bin/python scripts/make_settings_specs.py``. The specs are written, not edited by hand,
so the study's design is this file.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "experiments"
OUT = SOURCE / "settings"

RDD = {"wordcount", "pagerank", "inverted_index", "sessions"}
"""Workloads whose shuffles are RDD shuffles (their count is spark.default.parallelism)."""
EXTRA = {"wide_shuffle": SOURCE / "cluster" / "scaleout" / "wide_shuffle.toml"}
"""Workloads of other studies, by the name of their settings spec: the scale-out study's wide
shuffle (a DataFrame repartition by bucket then an aggregation: a SQL workload) runs on one
machine as well as on the cluster; only its configs are the cluster's."""
DESCRIPTIONS = {
    "wide_shuffle": "Many-to-many hash shuffle (DataFrame repartition by bucket, aggregated)"
}
"""Descriptions that would mislead here (the scale-out spec's names its cluster)."""
PARAMS = {
    "tpch": {"sf": "0.5", "queries": "1,3,5,10,12,18"},
    "tpcds": {"sf": "1", "queries": "7,18,27,40,46,78"},
    "wide_shuffle": {"partitions": "conf"},
}
"""Smaller inputs where thirteen runs at the workload's usual size would take too long: TPC-H
at scale factor 0.5, six of its queries (an aggregation, and joins of three to six tables, where
broadcast and shuffle partitions matter), as 2,000 partitions without AQE make each of its
shuffles 2,000 tasks. TPC-DS at scale factor 1, its workload's six default queries (star joins
with rollups, sales outer-joined with their returns; 41-65 s in three runs at 64 partitions
with AQE on, the machine shared). The wide shuffle's repartition takes its count
from spark.sql.shuffle.partitions (`conf`) instead of the scale-out study's fixed 64, so the
setting reaches it."""
PARTITIONS = (1, 8, 64, 200, 400, 2000)
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


def _moved(path: Path, relative: str) -> str:
    """``relative`` (a path relative to the spec file ``path``) made relative to `OUT`."""
    return Path(os.path.relpath((path.parent / relative).resolve(), OUT)).as_posix()


def spec(path: Path, stem: str) -> str:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    workload = data.get("workload", data["name"])
    params = dict(data.get("params", {})) | PARAMS.get(stem, {})
    prepare = [
        "{spec_dir}/" + _moved(path, w.removeprefix("{spec_dir}/"))
        if w.startswith("{spec_dir}/")
        else w
        for w in data.get("prepare", [])
    ]
    description = DESCRIPTIONS.get(stem, data.get("description", ""))
    lines = [
        f"# Settings study (scripts/settings_study.sh): {workload} under Spark settings.",
        "# Written by scripts/make_settings_specs.py from "
        + path.relative_to(REPO).as_posix()
        + ";",
        "# edit that script, not this file.",
        f"name = {_toml_value('settings-' + workload)}",
        f"workload = {_toml_value(workload)}",
        f"description = {_toml_value(description + ' (settings study)')}",
        f"script = {_toml_value(_moved(path, data['script']))}",
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
    sources = {path.stem: path for path in SOURCE.glob("*.toml")} | EXTRA
    for stem, path in sorted(sources.items()):
        (OUT / f"{stem}.toml").write_text(spec(path, stem), encoding="utf-8")
        print(OUT / f"{stem}.toml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
