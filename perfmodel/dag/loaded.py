"""What a front end delivers: a profile, where it came from, and what reading it met.

Every front end (Spark's event logs, Dask's task streams) returns one, so the facade,
the diagnosis and the data-quality report read the same fields whatever the framework.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from perfmodel.dag.model import ApplicationProfile
from perfmodel.profile.eventlog import EventLogSource, LogProblem
from perfmodel.profile.quality import DataQuality

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(slots=True)
class LoadedProfile:
    """A profile plus everything said about reading it."""

    profile: ApplicationProfile
    source: EventLogSource
    problems: list[LogProblem] = field(default_factory=list)
    bundle: Path | None = None
    """The profile bundle the event log came from (stack samples live there), if any."""
    task_end_events: int = 0
    task_end_reasons: dict[str, int] = field(default_factory=dict)
    header_lines_skipped: int = 0
    quality: DataQuality = field(default_factory=DataQuality)
    """Damage met while reading, counted by kind (see `perfmodel.profile.quality`)."""
    samples: pa.Table | None = None
    """The bundle's stack samples as the front end placed them (Dask ties each to the task
    on its thread); None: the bundle's samples table as recorded (`load_samples`)."""
