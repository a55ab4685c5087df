"""Advice lines are quantified by replays, and sweeps parse and cover their grid."""

import pytest

from perfmodel.analysis import analyse_profile
from perfmodel.dag.model import ApplicationProfile
from perfmodel.errors import PerfmodelError
from perfmodel.simulate.advice import advise
from perfmodel.simulate.config import ConfigError
from perfmodel.simulate.synthetic import StageSpec, TaskSpec, build_synthetic
from perfmodel.simulate.whatif import SweepAxis, is_axis_spec, parse_axes


def _mixed() -> ApplicationProfile:
    cpu = [TaskSpec(1000, cpu_ms=950)] * 8
    io = [TaskSpec(1000, cpu_ms=50, shuffle_write_ms=950)] * 8
    return build_synthetic([[StageSpec(0, cpu), StageSpec(1, io, [0])]], 2)


def test_advice_quantifies_cpu_and_disk_stages() -> None:
    lines = advise(_mixed())
    by_stage = {a.stage_id: a for a in lines}
    cpu = by_stage[0]
    assert cpu.resource == "cpu" and cpu.change == "2× cores"
    assert cpu.before_s == pytest.approx(4.0) and cpu.after_s == pytest.approx(2.0)
    assert "stage 0 is CPU-bound (100% of its time): 2× cores → 4.0 s to ~2.0 s" in cpu.text
    disk = by_stage[1]
    assert disk.resource == "disk"
    assert "more threads on this host will not help" in disk.text
    assert disk.after_s < disk.before_s  # a faster disk does help
    overall = by_stage[None]
    assert overall.before_s == pytest.approx(8.0)


def test_sweep_axes_parse_and_validate() -> None:
    axes = parse_axes(["cores=1,2,4", "mem=2g,4g"])
    assert axes == [SweepAxis("cores", ("1", "2", "4")), SweepAxis("mem", ("2g", "4g"))]
    assert is_axis_spec("disk-bw=1x,2x") and not is_axis_spec("app.log")
    for bad in (["cores="], ["speed=1"], ["cores=1", "cores=2"], ["mem=lots"], []):
        with pytest.raises(PerfmodelError):
            parse_axes(bad)
    with pytest.raises(ConfigError, match="NAME=V1"):
        parse_axes(["speed=1"])


def test_sweep_covers_the_grid() -> None:
    points = analyse_profile(_mixed()).sweep(parse_axes(["cores=1,2,4", "disk-bw=1x,2x"]))
    assert [pt.settings for pt in points][:2] == [
        {"cores": "1", "disk-bw": "1x"},
        {"cores": "1", "disk-bw": "2x"},
    ]
    assert len(points) == 6
    t = {(pt.settings["cores"], pt.settings["disk-bw"]): pt.prediction.predicted_s for pt in points}
    # CPU stage halves with cores; the disk stage only responds to bandwidth.
    assert t[("4", "1x")] < t[("2", "1x")] < t[("1", "1x")]
    assert t[("2", "2x")] < t[("2", "1x")]


def test_advice_names_time_no_resource_explains() -> None:
    # A stage whose unattributed time is put to `other` (what per-thread CPU measures off
    # CPU and bytes do not explain) gets a line saying no resource shortens it.
    from perfmodel.dag.resources import ResourceVector

    waits = [TaskSpec(1000, cpu_ms=100)] * 8
    p = build_synthetic([[StageSpec(0, waits)]], 2)
    lines = advise(p, {(0, 0): ResourceVector({"cpu": 0.1, "lock": 0.9})})
    stage = next(a for a in lines if a.stage_id == 0)
    assert stage.resource == "other"
    assert stage.share == pytest.approx(0.9)
    assert "stage 0 waits off CPU for 90% of its time" in stage.text
    # Each task waits as long; twice the slots run twice the tasks at once.
    assert stage.before_s == pytest.approx(4.0) and stage.after_s == pytest.approx(2.0)
    assert "only more tasks at once (2× cores → 4.0 s to ~2.0 s)" in stage.text
