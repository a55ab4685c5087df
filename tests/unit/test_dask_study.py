"""experiments/dask/study.py's repetitions: which run of a configuration predicts, what it is
compared with, and the noise between repeats, on hand-made runs (no Dask, no recording)."""

from __future__ import annotations

import pytest

from tests.conftest import REPO, load_script

study = load_script("dask_study", REPO / "experiments" / "dask" / "study.py")


def _runs(times: dict[str, list[float]]) -> tuple[list, dict[str, float]]:
    runs, seconds = [], {}
    for name, values in times.items():
        workers, threads = int(name[1]), int(name[3])
        for i, t in enumerate(values, start=1):
            bundle = f"/b/{name}-run{i}"
            config = study.Config(workers, threads, "1GiB")
            runs.append(study.Run("w", config, bundle, 0, 0.0, 0.0, t, i))
            seconds[bundle] = t
    return runs, seconds


def test_the_median_run_predicts_and_the_median_is_measured() -> None:
    runs, seconds = _runs({"w1t1": [9.0, 7.0, 8.0], "w2t2": [4.0, 6.0]})
    medians = {c.name: (r.bundle, m) for c, (r, m) in study.median_runs(runs, seconds).items()}
    assert medians["w1t1m1GiB"] == ("/b/w1t1-run3", 8.0)
    # An even count: the lower of the middle two runs predicts, the median is their mean.
    assert medians["w2t2m1GiB"] == ("/b/w2t2-run1", 5.0)


def test_repeat_noise_is_over_ordered_pairs_within_a_configuration() -> None:
    runs, seconds = _runs({"w1t1": [10.0, 12.0], "w2t1": [5.0]})
    noise = study.repeat_noise(runs, seconds)
    assert sorted(noise) == pytest.approx([2 / 12, 2 / 10])


def test_a_single_run_per_configuration_is_its_own_median() -> None:
    runs, seconds = _runs({"w1t1": [7.5], "w1t2": [5.0]})
    assert study.repeat_noise(runs, seconds) == []
    chosen = study.median_runs(runs, seconds)
    assert {r.bundle for r, _ in chosen.values()} == {"/b/w1t1-run1", "/b/w1t2-run1"}
