"""Resource vectors: the share of an operation's time spent on each resource.

Defined at the DAG level because both the code models (which infer them) and the
simulator (which replays with them) use them, and neither may depend on the other.
The class set is data-driven (whatever the trained model's corpus names), so nothing
here enumerates resources.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(slots=True)
class ResourceVector:
    """Shares over resources that sum to 1 (or an empty vector: nothing known)."""

    shares: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_weights(cls, weights: Mapping[str, float]) -> ResourceVector:
        """Normalise non-negative weights into shares; all-zero weights give an empty vector."""
        clean = {k: max(float(v), 0.0) for k, v in weights.items()}
        total = sum(clean.values())
        if total <= 0:
            return cls({})
        return cls({k: v / total for k, v in clean.items()})

    @property
    def dominant(self) -> str | None:
        """The resource with the largest share (None when nothing is known)."""
        if not self.shares:
            return None
        return max(self.shares.items(), key=lambda kv: kv[1])[0]

    def get(self, resource: str) -> float:
        return self.shares.get(resource, 0.0)
