"""Token vocabularies (node types, identifier subtokens) built from the training split.

Index 0 is reserved for unknown tokens, so a vocabulary can meet words it never saw at
training time (new libraries, user code) without failing; it is also the padding index.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

UNKNOWN = "<unk>"


@dataclass(frozen=True)
class Vocab:
    """An ordered token list; ``tokens[0]`` is ``<unk>``."""

    tokens: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {t: i for i, t in enumerate(self.tokens)})

    @classmethod
    def build(cls, words: Iterable[str], min_count: int = 1, max_size: int | None = None) -> Vocab:
        """Most frequent words first (ties alphabetical, so builds are reproducible)."""
        counts = Counter(words)
        ranked = sorted(
            (w for w, c in counts.items() if c >= min_count and w != UNKNOWN),
            key=lambda w: (-counts[w], w),
        )
        if max_size is not None:
            ranked = ranked[: max_size - 1]
        return cls((UNKNOWN, *ranked))

    def __len__(self) -> int:
        return len(self.tokens)

    def id(self, token: str) -> int:
        return self._index.get(token, 0)  # type: ignore[attr-defined]

    def ids(self, tokens: Iterable[str]) -> list[int]:
        index: dict[str, int] = self._index  # type: ignore[attr-defined]
        return [index.get(t, 0) for t in tokens]
