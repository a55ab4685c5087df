"""Sums of consecutive row ranges (a stage's tasks) for every range at once, to the last bit.

Each stage attempt is a consecutive range of the application's task columns, and its figures
used to be summed one stage at a time: a dozen numpy calls per stage, which is most of the
time on a log of thousands of small stages. `np.add.reduceat` does them all in one call but
adds in another order (its results differ in the last bits even for three elements), so the
sums here add short ranges position by position across all ranges (one vector add per
position: exactly the in-order sum) and give each long range its own call.
"""

from __future__ import annotations

import numpy as np

PAIRWISE_FROM = 8
"""``ndarray.sum`` adds runs shorter than this in order, longer ones pairwise."""


def segment_sums(
    values: np.ndarray, starts: np.ndarray, lengths: np.ndarray, *, like: str = "sum"
) -> np.ndarray:
    """Per row of ``values`` (shape (rows, n), or (n,)), the sum of each range
    ``[starts[i], starts[i] + lengths[i])``; 0 for empty ranges.

    ``like="sum"``: equal to ``values[..., lo:hi].sum(axis=-1)``; ``like="cumsum"``: equal to
    ``np.cumsum(values[..., lo:hi], axis=-1)[..., -1]`` (in order, however long).
    """
    flat = values.ndim == 1
    matrix = values[np.newaxis, :] if flat else values
    out = np.zeros((matrix.shape[0], len(starts)), dtype=np.float64)
    short_up_to = PAIRWISE_FROM - 1 if like == "sum" else _ORDERED_UP_TO
    segs = np.flatnonzero((lengths > 0) & (lengths <= short_up_to))
    position = 0
    while segs.size:
        out[:, segs] += matrix[:, starts[segs] + position]
        position += 1
        segs = segs[lengths[segs] > position]
    for i in np.flatnonzero(lengths > short_up_to).tolist():
        lo, hi = int(starts[i]), int(starts[i] + lengths[i])
        if like == "cumsum":
            out[:, i] = np.cumsum(matrix[:, lo:hi], axis=1)[:, -1]
        else:  # row by row: a 2-D sum along its rows adds in another order than a 1-D one
            for r in range(matrix.shape[0]):
                out[r, i] = matrix[r, lo:hi].sum()
    return out[0] if flat else out


_ORDERED_UP_TO = 64
"""Ranges up to this long are added position by position; each longer one by its own
cumsum (one numpy call per long range, and long ranges are few: they hold many tasks)."""
