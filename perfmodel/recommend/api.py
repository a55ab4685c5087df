"""`recommend`: a profiled run and a catalog in, the configuration to buy out.

The one entry point the CLI calls: it reads the catalog, describes the profiled machine
(a catalog row or explicit figures) so speeds and bandwidths scale from it, loads the
profile through the facade, calibrates on stored runs when asked, and runs the search.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from perfmodel.errors import PerfmodelError
from perfmodel.recommend.catalog import MachineType, find_machine, parse_catalog
from perfmodel.recommend.history import Calibration, calibrate
from perfmodel.recommend.search import Point, Request, SearchResult, search
from perfmodel.simulate.config import BaselineOverrides, ClusterConfig

if TYPE_CHECKING:
    from perfmodel.analysis import LogPath


class RequestError(PerfmodelError, ValueError):
    """An option that cannot be read (a deadline, a budget); the message shows the form."""


NOT_GIVEN = "not given: cpu_speed 1.0, the model's default bandwidths"


@dataclass(frozen=True, slots=True)
class ProfiledMachine:
    """What the profiled run ran on, as far as the scaling needs it."""

    cpu_speed: float = 1.0
    disk_bw: float | None = None
    net_bw: float | None = None
    host_cores: int | None = None
    description: str = NOT_GIVEN


def profiled_machine(
    machines: list[MachineType],
    vm_type: str | None = None,
    cpu_speed: float | None = None,
    disk_bw: float | None = None,
    net_bw: float | None = None,
) -> ProfiledMachine:
    """A catalog row (``--baseline-machine``), with any explicit figure taking precedence."""
    row = find_machine(machines, vm_type) if vm_type else None
    if cpu_speed is not None and cpu_speed <= 0:
        raise RequestError("--baseline-cpu-speed must be positive (the catalog's scale)")
    parts = [f"catalog row {row.vm_type}"] if row else []
    if cpu_speed is not None or disk_bw is not None or net_bw is not None:
        parts.append("options")
    return ProfiledMachine(
        cpu_speed=cpu_speed if cpu_speed is not None else (row.cpu_speed if row else 1.0),
        disk_bw=disk_bw if disk_bw is not None else (row.disk_bw if row else None),
        net_bw=net_bw if net_bw is not None else (row.net_bw if row else None),
        host_cores=row.vcpu if row else None,
        description=" + ".join(parts) if parts else NOT_GIVEN,
    )


@dataclass(slots=True)
class Recommendation:
    """The search's answers with what they rest on (for rendering and ``--json``)."""

    source: str
    result: SearchResult
    baseline: ClusterConfig
    machine: ProfiledMachine
    observed_s: float
    model_error: float
    calibration: Calibration | None = None
    notes: list[str] = field(default_factory=list)

    def point_dict(self, point: Point | None) -> dict[str, object] | None:
        if point is None:
            return None
        out = point.as_dict()
        out["spark_conf"] = point.spark_conf()
        twin = self.result.as_run(point)
        if twin is not None:
            out["as_run"] = {
                "predicted_s": twin.predicted_s,
                "upper_s": twin.upper_s,
                "cost": twin.cost,
            }
        return out

    def as_dict(self) -> dict[str, object]:
        r = self.result
        return {
            "source": self.source,
            "recommended": self.point_dict(r.recommended),
            "cheapest_meeting_deadline": self.point_dict(r.cheapest_meeting_deadline),
            "fastest_within_budget": self.point_dict(r.fastest_within_budget),
            "pareto": [p.as_dict() for p in r.pareto],
            "top": [p.as_dict() for p in r.top],
            "points": [p.as_dict() for p in r.points],
            "deadline_s": r.request.deadline_s,
            "budget_usd": r.request.budget_usd,
            "interval": {
                "bound_used_for_deadline": "upper",
                "relative": r.band.relative,
                "source": r.band.source,
            },
            "calibration": self.calibration.as_dict() if self.calibration else None,
            "observed_s": self.observed_s,
            "model_error": self.model_error,
            "baseline_config": self.baseline.as_dict(),
            "profiled_machine": {
                "cpu_speed": self.machine.cpu_speed,
                "disk_bw_bytes_per_s": self.baseline.disk_bw,
                "net_bw_bytes_per_s": self.baseline.net_bw,
                "description": self.machine.description,
            },
            "search": {
                "points": len(r.points),
                "unique_configs": r.unique_configs,
                "replays": r.replays,
                "max_nodes": r.request.max_nodes,
                "driver_node": r.request.driver_node,
                "local": r.request.local,
                "settings_replays": r.tuning.replays if r.tuning else 0,
            },
            "settings_search": r.tuning.as_dict() if r.tuning else None,
            "notes": list(self.notes) + list(r.notes),
        }


def recommend(
    path: str | LogPath,
    catalog: str | Path,
    request: Request,
    *,
    baseline_machine: str | None = None,
    baseline_cpu_speed: float | None = None,
    baseline_disk_bw: float | None = None,
    baseline_net_bw: float | None = None,
    history: str | None = None,
    store: str | Path | None = None,
    attempt: str | None = None,
    code_vectors: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Recommendation:
    """Load the profile (local or remote: `perfmodel.analysis.locate`), calibrate on
    ``history`` (an experiment name) if given, search."""
    from dataclasses import replace

    from perfmodel.analysis import load

    if request.local and request.driver_node:
        raise RequestError(
            "--driver-node with --local: in local mode the one machine runs the driver and "
            "the tasks, so no other node is paid for; give one of them"
        )
    machines = parse_catalog(catalog)
    machine = profiled_machine(
        machines, baseline_machine, baseline_cpu_speed, baseline_disk_bw, baseline_net_bw
    )
    overrides = BaselineOverrides(
        host_cores=machine.host_cores, disk_bw=machine.disk_bw, net_bw=machine.net_bw
    )
    analysis = load(path, attempt, code_vectors=code_vectors, overrides=overrides)
    baseline = analysis.predict()
    calibration = calibrate(analysis, store, history) if history else None
    request = replace(
        request,
        reference_cpu_speed=machine.cpu_speed,
        calibration=calibration.factor if calibration else 1.0,
        calibration_loo_error=calibration.rms_loo_error if calibration else None,
    )
    result = search(analysis, machines, request, progress)
    notes = list(analysis.notes)
    if baseline.config.local_mode and not request.local:
        notes.append(
            "the profiled run was local mode: on a cluster, shuffle data crosses the network, "
            "which the replay only sees as far as the profile measured fetch waits"
        )
    return Recommendation(
        source=str(path),
        result=result,
        baseline=analysis.baseline,
        machine=machine,
        observed_s=baseline.observed_s,
        model_error=baseline.model_error,
        calibration=calibration,
        notes=notes,
    )


_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(min|sec|h|m|s)?", re.IGNORECASE)
_UNIT_S = {"h": 3600.0, "m": 60.0, "min": 60.0, "s": 1.0, "sec": 1.0, None: 1.0}


def parse_duration(text: str) -> float:
    """Seconds of ``20m``, ``1h30m``, ``90s``, ``1.5h`` or a bare number of seconds."""
    s = text.strip().replace(" ", "")
    pos, total, parts = 0, 0.0, 0
    while pos < len(s):
        m = _DURATION.match(s, pos)
        if m is None or m.end() == pos:
            break
        unit = m.group(2).lower() if m.group(2) else None
        total += float(m.group(1)) * _UNIT_S[unit]
        pos, parts = m.end(), parts + 1
    if not s or pos != len(s) or parts == 0:
        raise RequestError(f"cannot read duration {text!r}: write e.g. 20m, 1h30m, 90s, 600")
    if total <= 0:
        raise RequestError(f"duration {text!r} must be more than zero")
    return total


def parse_money(text: str) -> float:
    """USD of ``5usd``, ``$5``, ``5.50 USD`` or ``5``."""
    m = re.fullmatch(r"\s*\$?\s*(\d+(?:\.\d+)?)\s*(usd)?\s*", text, re.IGNORECASE)
    if m is None:
        raise RequestError(f"cannot read budget {text!r}: write e.g. 5usd, $5, 0.50")
    if float(m.group(1)) <= 0:
        raise RequestError(f"budget {text!r} must be more than zero")
    return float(m.group(1))
