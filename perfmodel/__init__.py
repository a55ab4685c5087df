"""perfmodel: why a Spark job is slow and what other resources would do to it.

The library's front door is `load` (an event log or a profile bundle → `Analysis`, with
``.diagnose()``, ``.predict(WhatIf(...))``, ``.sweep(...)`` and ``.advice()``). It is imported
on first use, so ``import perfmodel`` alone (the CLI's start-up) stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from perfmodel._version import __version__

__all__ = ["Analysis", "PerfmodelError", "WhatIf", "__version__", "load"]

if TYPE_CHECKING:
    from perfmodel.analysis import Analysis, load
    from perfmodel.errors import PerfmodelError
    from perfmodel.simulate.config import WhatIf


def __getattr__(name: str) -> Any:
    if name in ("Analysis", "load"):
        from perfmodel import analysis

        return getattr(analysis, name)
    if name == "WhatIf":
        from perfmodel.simulate.config import WhatIf

        return WhatIf
    if name == "PerfmodelError":
        from perfmodel.errors import PerfmodelError

        return PerfmodelError
    raise AttributeError(f"module 'perfmodel' has no attribute {name!r}")
