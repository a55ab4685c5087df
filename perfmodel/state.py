"""Remembers the last analysed profile so `perfmodel predict` works right after `diagnose`.

The state lives in the user's state directory (``PERFMODEL_STATE_DIR`` overrides it, which
tests use); it holds a path, never analysis results, so it cannot go stale silently.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from perfmodel.atomic import write_atomically


@dataclass(frozen=True, slots=True)
class LastProfile:
    path: str
    attempt: str | None = None


def state_dir() -> Path:
    override = os.environ.get("PERFMODEL_STATE_DIR")
    if override:
        return Path(override)
    return Path(platformdirs.user_state_dir("perfmodel"))


def remember_profile(path: str | Path, attempt: str | None = None) -> None:
    """Record ``path`` as the profile the next path-less command should use."""
    directory = state_dir()
    text = str(path)
    remote = "://" in text and not text.startswith("file:")  # a URI is kept as given
    payload = {"path": text if remote else str(Path(path).resolve()), "attempt": attempt}
    write_atomically(directory / "last_profile.json", json.dumps(payload))


def last_profile() -> LastProfile | None:
    """The remembered profile, or None if none was analysed yet (or the record is unreadable)."""
    try:
        data = json.loads((state_dir() / "last_profile.json").read_text(encoding="utf-8"))
        return LastProfile(path=str(data["path"]), attempt=data.get("attempt"))
    except (OSError, ValueError, KeyError, TypeError):
        return None
