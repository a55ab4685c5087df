"""Spec loading: a valid spec expands its grid; every mistake is one clear SpecError."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfmodel.experiment.spec import load_spec, substitute
from perfmodel.experiment.spec_grid import SpecError

REPO = Path(__file__).resolve().parents[2]
WORDCOUNT = REPO / "experiments" / "workloads" / "wordcount.py"


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(body)
    return path


VALID = f"""
name = "wc"
script = "{WORDCOUNT}"
args = ["{{data}}/text-{{size_mb}}mb", "{{out}}"]
repetitions = 2
warmups = 1

[params]
size_mb = 5

[grid]
master = ["local[1]", "local[2]"]
driver_memory = ["512m", "2g"]
shuffle_partitions = [4]
conf = {{ "spark.sql.adaptive.enabled" = false }}

[[configs]]
name = "wide"
master = "local[*]"
"""


def test_grid_expands_and_options_apply(tmp_path: Path) -> None:
    spec = load_spec(_write(tmp_path, VALID))
    assert spec.name == "wc" and spec.workload == "wc"
    assert [c.name for c in spec.configs] == [
        "local[1] driver=512m partitions=4",
        "local[1] driver=2g partitions=4",
        "local[2] driver=512m partitions=4",
        "local[2] driver=2g partitions=4",
        "wide",
    ]
    c = spec.configs[2]
    assert c.cores == 2 and c.memory_bytes == 512 << 20
    assert c.submit_options() == [
        "--master",
        "local[2]",
        "--driver-memory",
        "512m",
        "--conf",
        "spark.sql.shuffle.partitions=4",
        "--conf",
        "spark.sql.adaptive.enabled=false",
    ]
    assert spec.configs[4].cores is None
    assert spec.warmups == 1 and spec.repetitions == 2
    assert spec.data_dir == (tmp_path / "data").resolve()
    values = {"data": "/d", "out": "/o", "size_mb": "5"}
    assert substitute(spec.args, values) == ["/d/text-5mb", "/o"]


def test_overrides(tmp_path: Path) -> None:
    spec = load_spec(_write(tmp_path, VALID))
    small = spec.with_overrides({"size_mb": "1"}, repetitions=1, only=["wide"])
    assert small.params["size_mb"] == "1" and small.repetitions == 1
    assert [c.name for c in small.configs] == ["wide"]
    with pytest.raises(SpecError, match="no parameter 'size'"):
        spec.with_overrides({"size": "1"})
    with pytest.raises(SpecError, match="no config named nope"):
        spec.with_overrides(only=["nope"])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('name = "x"\nscript = "nope.py"\n[grid]\nmaster=["local"]', "script 'nope.py' not found"),
        ('script = "W"\n[grid]\nmaster=["local[1]"]', "missing required key `name`"),
        ('name = "x"\n[grid]\nmaster=["local[1]"]', "exactly one of `script`"),
        ('name = "x"\nscript = "W"', "no configurations"),
        ('name = "x"\nscript = "W"\n[grid]\nmaster=["yarn"]', "master 'yarn' is not supported"),
        ('name = "x"\nscript = "W"\n[grid]\ndriver_memory=["lots"]', "cannot read memory size"),
        ('name = "x"\nscript = "W"\n[grid]\ndriver_memory=["256m"]', "below the 450m"),
        ('name = "x"\nscript = "W"\n[grid]\ncores=[1]', "unknown grid axis cores"),
        ('name = "x"\nscript = "W"\nargs=["{nope}"]\n[grid]\nmaster=["local"]', "uses {nope}"),
        ('name = "x"\nscript = "W"\nrepetitions = 0\n[grid]\nmaster=["local"]', "at least 1"),
        ('name = "x"\nscript = "W"\nwarmups = -1\n[grid]\nmaster=["local"]', "from 0 to 100"),
        (
            'name = "x"\nscript = "W"\nrepetitions = 100000000\n[grid]\nmaster=["local"]',
            "`repetitions` must be a whole number from 0 to 1,000",
        ),
        ('name = "x"\nscript = "W"\ntimeout_s = nan\n[grid]\nmaster=["local"]', "timeout_s"),
        (
            'name = "x"\nscript = "W"\n[grid]\nmaster=["local"]\nexecutor_memory=['
            + ",".join(f'"{i + 500}m"' for i in range(200))
            + "]\nshuffle_partitions=["
            + ",".join(str(i + 1) for i in range(200))
            + "]",
            "at most 10,000",
        ),
        ('name = "x"\nscript = "W"\nbogus = 1\n[grid]\nmaster=["local"]', "unknown key(s) bogus"),
        ('name = "x y"\nscript = "W"\n[grid]\nmaster=["local"]', "may only hold"),
        ('name = "x"\nscript = "W"\n[grid]\nconf={ "foo" = 1 }', "not a Spark setting"),
        (
            'name = "x"\nscript = "W"\n[[configs]]\nname="a"\n[[configs]]\nname="a"',
            "repeated: a",
        ),
        ('name = "x"\ncommand = ["true"]\n[grid]\nmaster=["local"]', "takes no `grid`"),
        ('name = "x"\nscript = "W"\n[record]\nsamples = 1\n[grid]\nmaster=["local"]', "[record]"),
        (
            'name = "x"\nscript = "W"\n[record]\njvm_sampler = "async"\n[grid]\nmaster=["local"]',
            "record.jvm_sampler must be 'jfr' or 'plugin' or 'both'",
        ),
        ('name = "x"\nscript = = "W"', "not valid TOML"),
    ],
)
def test_validation_errors(tmp_path: Path, body: str, message: str) -> None:
    path = _write(tmp_path, body.replace('"W"', f'"{WORDCOUNT}"'))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert message in str(info.value)
    assert str(path.resolve()) in str(info.value) or "not valid TOML" in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such spec file"):
        load_spec(tmp_path / "absent.toml")


def test_shipped_specs_are_valid() -> None:
    specs = sorted((REPO / "experiments").glob("*.toml"))
    assert len(specs) >= 5
    names = set()
    for path in specs:
        spec = load_spec(path)
        names.add(spec.workload)
        cores = {c.cores for c in spec.configs}
        assert {1, 2} <= cores, path
        assert len({c.memory_bytes for c in spec.configs}) >= 2, path
    assert {"wordcount", "pagerank", "sort", "sql-join", "udf-etl"} <= names
