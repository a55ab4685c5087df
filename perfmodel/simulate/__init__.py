"""Performance-resource model: runtime laws, what-if replay, bottlenecks and advice.

Reads only `perfmodel.dag` (profiles, resource vectors); the CLI and reports call in.
"""

from perfmodel.simulate.advice import Advice, advise
from perfmodel.simulate.config import (
    BaselineOverrides,
    ClusterConfig,
    ConfigError,
    WhatIf,
    apply_what_if,
    baseline_config,
)
from perfmodel.simulate.replay import Prediction, StagePrediction, replay, replay_workload
from perfmodel.simulate.workload import Workload, compile_workload

__all__ = [
    "Advice",
    "BaselineOverrides",
    "ClusterConfig",
    "ConfigError",
    "Prediction",
    "StagePrediction",
    "WhatIf",
    "Workload",
    "advise",
    "apply_what_if",
    "baseline_config",
    "compile_workload",
    "replay",
    "replay_workload",
]
