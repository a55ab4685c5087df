"""Shared by the tests that kill perfmodel (or a stand-in) and check what it left running."""

from __future__ import annotations

import time

import psutil


def gone(proc: psutil.Process, within_s: float = 20.0) -> bool:
    """Whether ``proc`` ends within ``within_s``: gone, or a zombie (dead, waiting for its
    parent or init to reap it)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            if proc.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False
