"""Experiment specs: which workload to run, under which configurations, how many times.

A spec is a TOML file (docs/experiments.md). It is validated completely before anything
runs, because a typo found after twenty minutes of measurements wastes them; every error
names the file, the key and what is accepted.

The workload is an unmodified PySpark script: configurations are applied from outside
(``spark-submit --master ... --driver-memory ... --conf ...``), never by editing it.
"""

from __future__ import annotations

import os
import re
import stat
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import msgspec

from perfmodel.atomic import describe_kind
from perfmodel.experiment.spec_grid import CLUSTER as CLUSTER
from perfmodel.experiment.spec_grid import MAX_CONFIGS, RunConfig, SpecError, expand_configs
from perfmodel.profile.record.defaults import default_interval_ms
from perfmodel.profile.record.setup import JVM_SAMPLERS

_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
TOP_KEYS = {
    "name",
    "workload",
    "description",
    "script",
    "args",
    "command",
    "warmups",
    "repetitions",
    "timeout_s",
    "data_dir",
    "params",
    "prepare",
    "grid",
    "configs",
    "record",
    "keep_output",
}


@dataclass(frozen=True, slots=True)
class RecordSettings:
    """How each run is recorded (passed to `perfmodel.profile.record.setup.RecordOptions`)."""

    jfr: bool = True
    pyspy: bool = True
    interval_ms: int = 20
    """The sampling period; a spec that names none takes its sampler's (`default_interval_ms`:
    20 ms with JFR, 50 ms with the plugin's sampler, as `perfmodel record`)."""
    jvm_sampler: str = "jfr"
    plugin_interval_ms: int | None = None
    """With ``jvm_sampler = "both"``: the plugin's period (default ``interval_ms``)."""


@dataclass(slots=True)
class ExperimentSpec:
    """A validated spec; paths are absolute, parameters not yet substituted."""

    name: str
    workload: str
    path: Path
    text: str
    configs: list[RunConfig]
    script: Path | None = None
    args: list[str] = field(default_factory=list)
    command: list[str] = field(default_factory=list)
    """A plain command instead of a script (any program; configs are not applied to it)."""
    prepare: list[str] = field(default_factory=list)
    warmups: int = 0
    repetitions: int = 1
    timeout_s: float = 600.0
    data_dir: Path = Path("build/experiments/data")
    params: dict[str, str] = field(default_factory=dict)
    record: RecordSettings = field(default_factory=RecordSettings)
    keep_output: bool = False
    description: str = ""

    def with_overrides(
        self,
        params: Mapping[str, str] | None = None,
        repetitions: int | None = None,
        warmups: int | None = None,
        only: list[str] | None = None,
    ) -> ExperimentSpec:
        """A copy with command-line overrides applied (unknown names are errors)."""
        new_params = dict(self.params)
        for key, value in (params or {}).items():
            if key not in new_params:
                known = ", ".join(sorted(new_params)) or "none"
                raise SpecError(f"{self.path}: no parameter {key!r} to override (known: {known})")
            new_params[key] = value
        configs = self.configs
        if only:
            names = {c.name for c in configs}
            missing = [n for n in only if n not in names]
            if missing:
                raise SpecError(
                    f"{self.path}: no config named {', '.join(missing)} "
                    f"(configs: {', '.join(c.name for c in configs)})"
                )
            configs = [c for c in configs if c.name in only]
        return ExperimentSpec(
            name=self.name,
            workload=self.workload,
            path=self.path,
            text=self.text,
            configs=configs,
            script=self.script,
            args=list(self.args),
            command=list(self.command),
            prepare=list(self.prepare),
            warmups=self.warmups if warmups is None else _count(warmups, "warmups", self.path),
            repetitions=(
                self.repetitions
                if repetitions is None
                else max(1, _count(repetitions, "repetitions", self.path))
            ),
            timeout_s=self.timeout_s,
            data_dir=self.data_dir,
            params=new_params,
            record=self.record,
            keep_output=self.keep_output,
            description=self.description,
        )


MAX_SPEC_BYTES = 1 << 20
"""A spec (or split) file is a few kB of TOML; 1 MiB is far past any real one."""


def read_toml_text(p: Path, what: str) -> str:
    """The text of a small TOML file, refusing, before a byte is read, a missing file, a
    FIFO (it would wait for a writer forever), a device (``/dev/zero`` never ends) and a
    file past `MAX_SPEC_BYTES`; the read itself stops at the bound."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise SpecError(f"{p}: no such {what} file") from None
    except OSError as exc:
        raise SpecError(f"{p}: cannot read the {what} file ({exc.strerror or exc})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = describe_kind(st.st_mode)
        raise SpecError(f"{p} is {kind}, not a {what} file; give a TOML file")
    with os.fdopen(fd, "rb") as f:
        data = f.read(MAX_SPEC_BYTES + 1)
    if len(data) > MAX_SPEC_BYTES:
        raise SpecError(
            f"{p}: {what} file is larger than {MAX_SPEC_BYTES >> 20} MiB; no real {what} is"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SpecError(f"{p}: not a TOML {what} (not UTF-8 text)") from None


def load_spec(path: str | Path) -> ExperimentSpec:
    """Read and validate a spec file."""
    p = Path(path)
    text = read_toml_text(p, "spec")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{p}: not valid TOML: {exc}") from None
    return parse_spec(data, p.resolve(), text)


def parse_spec(data: Mapping[str, Any], path: Path, text: str = "") -> ExperimentSpec:
    """Validate a spec's parsed TOML; ``path`` anchors relative paths (its directory)."""
    unknown = sorted(set(data) - TOP_KEYS)
    if unknown:
        raise SpecError(
            f"{path}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(TOP_KEYS))})"
        )
    base = path.parent
    name = _str(data, "name", path, required=True)
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise SpecError(f"{path}: name {name!r} may only hold letters, digits, '.', '_', '-'")
    script = _str(data, "script", path)
    command = _str_list(data, "command", path)
    if bool(script) == bool(command):
        raise SpecError(
            f"{path}: give exactly one of `script` (a PySpark script run by spark-submit with "
            "each config) or `command` (a plain command line)"
        )
    if command and ("grid" in data or "configs" in data):
        raise SpecError(f"{path}: `command` runs as is, so it takes no `grid` or `configs`")
    script_path = (base / script).resolve() if script else None
    if script_path is not None and not script_path.is_file():
        raise SpecError(f"{path}: script {script!r} not found (looked at {script_path})")
    params_raw = data.get("params", {})
    if not isinstance(params_raw, dict):
        raise SpecError(f"{path}: `params` must be a table of name = value")
    params = {}
    for key, value in params_raw.items():
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise SpecError(f"{path}: params.{key} must be a string or a number")
        params[str(key)] = str(value)
    args = _str_list(data, "args", path)
    prepare = _str_list(data, "prepare", path)
    for where, words in (("args", args), ("command", command), ("prepare", prepare)):
        for word in words:
            for ref in _PARAM.findall(word):
                if ref not in params and ref not in BUILTIN_PARAMS:
                    raise SpecError(
                        f"{path}: {where} uses {{{ref}}}, which is neither a builtin "
                        f"({', '.join(BUILTIN_PARAMS)}) nor in [params]"
                    )
    configs = [] if command else expand_configs(data, path)
    if command:
        configs = [RunConfig(name="as-is", master="n/a")]
    if len(configs) > MAX_CONFIGS:
        raise SpecError(
            f"{path}: {len(configs):,} configs; a spec may have at most {MAX_CONFIGS:,}"
        )
    names = [c.name for c in configs]
    counted = Counter(names)
    dupes = sorted(n for n, k in counted.items() if k > 1)
    if dupes:
        raise SpecError(f"{path}: config names must be unique; repeated: {', '.join(dupes)}")
    record_raw = data.get("record", {})
    record_keys = {"jfr", "pyspy", "interval_ms", "jvm_sampler", "plugin_interval_ms"}
    if not isinstance(record_raw, dict) or set(record_raw) - record_keys:
        raise SpecError(
            f"{path}: [record] takes jfr = bool, pyspy = bool, interval_ms = int, "
            f"jvm_sampler = {' or '.join(repr(s) for s in JVM_SAMPLERS)}, "
            "plugin_interval_ms = int"
        )
    sampler = record_raw.get("jvm_sampler", "jfr")
    if sampler not in JVM_SAMPLERS:
        raise SpecError(
            f"{path}: record.jvm_sampler must be {' or '.join(repr(s) for s in JVM_SAMPLERS)}, "
            f"not {sampler!r}"
        )
    rec = RecordSettings(
        jfr=_bool(record_raw, "jfr", path, True),
        pyspy=_bool(record_raw, "pyspy", path, True),
        interval_ms=_count(record_raw.get("interval_ms", 0), "record.interval_ms", path)
        or default_interval_ms(sampler),
        jvm_sampler=sampler,
        plugin_interval_ms=_count(
            record_raw.get("plugin_interval_ms", 0), "record.plugin_interval_ms", path
        )
        or None,
    )
    timeout = data.get("timeout_s", 600)
    if (
        not isinstance(timeout, int | float)
        or isinstance(timeout, bool)
        or not 0 < timeout <= MAX_TIMEOUT_S
    ):
        raise SpecError(
            f"{path}: timeout_s must be a number of seconds above 0 and at most "
            f"{MAX_TIMEOUT_S:,.0f} (a week)"
        )
    repetitions = _count(data.get("repetitions", 1), "repetitions", path)
    if repetitions < 1:
        raise SpecError(f"{path}: repetitions must be at least 1")
    return ExperimentSpec(
        name=name,
        workload=_str(data, "workload", path) or name,
        path=path,
        text=text,
        configs=configs,
        script=script_path,
        args=args,
        command=command,
        prepare=prepare,
        warmups=_count(data.get("warmups", 0), "warmups", path),
        repetitions=repetitions,
        timeout_s=float(timeout),
        data_dir=(base / _str(data, "data_dir", path, default="data")).resolve(),
        params=params,
        record=rec,
        keep_output=_bool(data, "keep_output", path, False),
        description=_str(data, "description", path),
    )


BUILTIN_PARAMS = ("python", "data", "out", "spec_dir")
"""Placeholders every spec may use: the venv's python, the data dir, the run's scratch
output dir, and the spec file's directory."""


def substitute(words: list[str], values: Mapping[str, str]) -> list[str]:
    """Replace ``{name}`` placeholders (validated at load time) by their values."""
    return [_PARAM.sub(lambda m: values[m.group(1)], w) for w in words]


def _str(
    data: Mapping[str, Any], key: str, path: Path, *, required: bool = False, default: str = ""
) -> str:
    value = data.get(key)
    if value is None:
        if required:
            raise SpecError(f"{path}: missing required key `{key}`")
        return default
    if not isinstance(value, str) or (required and not value):
        raise SpecError(f"{path}: `{key}` must be a non-empty string")
    return value


def _str_list(data: Mapping[str, Any], key: str, path: Path) -> list[str]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise SpecError(f"{path}: `{key}` must be a list of strings")
    return [str(v) for v in value]


def _bool(data: Mapping[str, Any], key: str, path: Path, default: bool) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise SpecError(f"{path}: `{key}` must be true or false")
    return value


COUNT_LIMITS: dict[str, int] = {
    "repetitions": 1_000,
    "warmups": 100,
    "record.interval_ms": 60_000,
    "record.plugin_interval_ms": 60_000,
}
"""Most of each count a spec may ask for: a run of a workload takes seconds to hours, so a
thousand repetitions is already weeks; beyond that the number is a typing mistake."""
MAX_TIMEOUT_S = 7 * 24 * 3600.0


def _count(value: object, key: str, path: Path) -> int:
    high = COUNT_LIMITS.get(key, 1_000_000)
    try:
        return msgspec.convert(value, Annotated[int, msgspec.Meta(ge=0, le=high)], strict=True)
    except msgspec.ValidationError:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
        raise SpecError(
            f"{path}: `{key}` must be a whole number from 0 to {high:,}, got {shown}"
        ) from None
