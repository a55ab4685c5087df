"""The facade and the diagnosis model: what every caller asks of one profile.

`load` reads an event log or a bundle (local or remote: `locate`, `SourceOptions`) through
a front end and returns an `Analysis` (`perfmodel.analysis.facade`); the diagnosis model
(`diagnosis`, `critical_path`, `task_figures`, `sample_views`) and `watch` (findings per
stage of a running application) sit beside it, below the renderers of `perfmodel.report`,
which only turn its results into text, JSON, HTML or flame graphs.
"""

from perfmodel.analysis.facade import (
    CONF,
    Analysis,
    Engine,
    NoSamplesError,
    NoStagesError,
    SweepPoint,
    analyse_loaded,
    analyse_profile,
    load,
    locate,
    read,
)
from perfmodel.analysis.partition_knob import PartitionKnob
from perfmodel.profile.eventlog import DEFAULT_MAX_DECOMPRESSED
from perfmodel.profile.sources.stores import LogPath, SourceOptions
from perfmodel.simulate.replay import Prediction, StagePrediction
from perfmodel.simulate.stage_work import COMPONENTS
from perfmodel.spark.settings import SettingError, SettingNotPredictedError

__all__ = [
    "COMPONENTS",
    "CONF",
    "DEFAULT_MAX_DECOMPRESSED",
    "Analysis",
    "Engine",
    "LogPath",
    "NoSamplesError",
    "NoStagesError",
    "PartitionKnob",
    "Prediction",
    "SettingError",
    "SettingNotPredictedError",
    "SourceOptions",
    "StagePrediction",
    "SweepPoint",
    "analyse_loaded",
    "analyse_profile",
    "load",
    "locate",
    "read",
]
