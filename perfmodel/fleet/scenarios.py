"""The what-if scenarios of a fleet run: ``cores=2x``, ``mem=0.5x``, ``cores=2x,mem=4g``.

One scenario is a comma-separated set of settings named as `perfmodel predict`'s options
(the sweep axes). A value may be absolute (``cores=16``, ``mem=4g``) or, unlike in
``predict``, a factor of each application's own baseline (``cores=2x``): across a fleet,
"twice the cores" means something different for every application.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from perfmodel.simulate.config import ClusterConfig, ConfigError, WhatIf
from perfmodel.simulate.sweep import AXES, is_axis_spec, what_if_for
from perfmodel.simulate.units import parse_factor

_RELATIVE_INT = {"cores", "executors", "executor-cores", "host-cores"}


@dataclass(frozen=True, slots=True)
class Scenario:
    """One what-if, as written (``label``) and as settings ``name → value``."""

    label: str
    settings: tuple[tuple[str, str], ...]

    def what_if(self, base: ClusterConfig) -> WhatIf:
        """The change this scenario makes to one application's baseline."""
        absolute: dict[str, str] = {}
        relative: dict[str, object] = {}
        for key, value in self.settings:
            factor = parse_factor(value)
            if factor is None or key in ("disk-bw", "net-bw"):
                absolute[key] = value
            elif key == "cores":
                relative["cores"] = max(1, round(base.executors * base.executor_cores * factor))
            elif key == "executors":
                relative["executors"] = max(1, round(base.executors * factor))
            elif key == "executor-cores":
                relative["executor_cores"] = max(1, round(base.executor_cores * factor))
            elif key == "host-cores":
                relative["host_cores"] = max(1, round(base.host_cores * factor))
            elif key == "mem":
                relative["memory_bytes"] = max(1, int(base.memory_bytes * factor))
            elif key == "cpu-speed":
                relative["cpu_speed"] = base.cpu_speed * factor
        return what_if_for(absolute, WhatIf(**relative))  # type: ignore[arg-type]


def is_scenario_spec(text: str) -> bool:
    """True for text that reads as a scenario (every comma-separated part a known setting)."""
    parts = [p for p in text.split(",") if p.strip()]
    return bool(parts) and all(is_axis_spec(p) for p in parts)


def parse_scenario(text: str) -> Scenario:
    """``"cores=2x,mem=0.5x"`` → a `Scenario`; every value is checked now, not per log."""
    settings: list[tuple[str, str]] = []
    seen: set[str] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = part.partition("=")
        key = name.strip().lower().replace("_", "-")
        if not sep or key not in AXES or not value.strip():
            raise ConfigError(
                f"cannot read what-if {text!r}: write NAME=VALUE[,NAME=VALUE] with NAME one of "
                + ", ".join(AXES)
                + " and VALUE absolute (cores=16, mem=4g) or a factor (cores=2x, mem=0.5x)"
            )
        if key in seen:
            raise ConfigError(f"what-if {text!r} sets {key} twice")
        seen.add(key)
        value = value.strip()
        if parse_factor(value) is None or key in ("disk-bw", "net-bw"):
            what_if_for({key: value})  # raises on a bad absolute value
        elif key not in _RELATIVE_INT | {"mem", "cpu-speed"}:
            raise ConfigError(f"what-if {text!r}: {key} takes no factor")
        settings.append((key, value))
    if not settings:
        raise ConfigError("an empty what-if: write e.g. cores=2x or mem=0.5x")
    label = ",".join(f"{k}={v}" for k, v in settings)
    return Scenario(label, tuple(settings))


def parse_scenarios(texts: Sequence[str]) -> list[Scenario]:
    """Scenarios in the order given, each once."""
    out: list[Scenario] = []
    for text in texts:
        scenario = parse_scenario(text)
        if scenario.label not in {s.label for s in out}:
            out.append(scenario)
    return out


def signature(scenarios: Sequence[Scenario]) -> str:
    """What the manifest stores: a log analysed for other what-ifs is analysed again."""
    return ";".join(s.label for s in scenarios)
