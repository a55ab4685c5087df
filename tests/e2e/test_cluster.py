"""The shaped cluster in network namespaces, and `perfmodel record` against it.

The slow tests need root and `ip netns` (they skip with the reason otherwise): one brings up
a 2-worker cluster with a link limit, records a small PySpark job on it and tears it down;
one makes `up` fail half-way and checks nothing is left. The fixture tears the cluster down
however a test ends.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import psutil
import pyarrow.compute as pc
import pytest

from perfmodel.experiment import cluster, netns
from perfmodel.experiment.netns import ClusterError
from perfmodel.profile.record.cost import usable_cores
from tests.jvm_startup import SPEED_OPTIONS

JOB = Path(__file__).parents[1] / "data" / "cluster_job.py"
TEST_NAME = "pmt"
TEST_SUBNET = "10.77.1"
WORKER_CPU = 1.0
"""Each test worker's CPU quota (cores), which the recording reads back from its cgroup. One
core each: the two executors have the machine's two cores between them (at half a core each,
the test took 43 s instead of 30 s, most of it the executor JVMs starting)."""
RATE_MBIT = 100.0


def _skip_reason() -> str | None:
    reason = netns.unavailable_reason()
    if reason:
        return f"cluster tests need root and `ip netns`: {reason}"
    try:
        import pyspark  # noqa: F401

        from perfmodel.profile import jfr

        jfr.plugin_jar()
    except (ImportError, jfr.JfrError) as exc:
        return f"cluster tests need pyspark and the perfmodel JVM jar: {exc}"
    return None


needs_cluster = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason() or ""))


def _nothing_left(name: str) -> list[str]:
    return cluster.leftovers(name)


# Fast checks of the plan: no root needed.


def test_cluster_record_defaults_to_the_plugin_sampler_every_50_ms() -> None:
    """The cheapest recording measured on the cluster (docs/cluster.md); `record` takes the
    same sampler, its period left to the sampler's default (50 ms for the plugin's)."""
    import typer

    from perfmodel.cli import build_app

    group = typer.main.get_command(build_app())
    ctx = typer.Context(group)
    record = group.get_command(ctx, "cluster").get_command(ctx, "record")  # type: ignore[union-attr]
    defaults = {p.name: p.default for p in record.params}
    assert defaults["jvm_sampler"] == "plugin" and defaults["interval_ms"] == 50
    plain = {p.name: p.default for p in group.get_command(ctx, "record").params}
    assert plain["jvm_sampler"] == "plugin" and plain["interval_ms"] is None


def test_plan_names_and_addresses() -> None:
    state = cluster.plan(cluster.ClusterSpec(name="abc", workers=3, subnet="10.9.8"))
    assert [n.namespace for n in state.nodes] == ["abc-m", "abc-w1", "abc-w2", "abc-w3"]
    assert [n.address for n in state.nodes] == ["10.9.8.2", "10.9.8.11", "10.9.8.12", "10.9.8.13"]
    assert state.master_url == "spark://10.9.8.2:7077"
    assert all(len(n.host_link) <= 15 and len(n.host_link[:-2] + "-n") <= 15 for n in state.nodes)
    assert state.driver_command(["python", "job.py"])[:4] == ["ip", "netns", "exec", "abc-m"]
    env = state.driver_env({"PATH": "/bin"})
    assert env["SPARK_LOCAL_IP"] == "10.9.8.2"
    assert env["SPARK_CONF_DIR"].endswith("abc/conf")


@pytest.mark.parametrize(
    "spec",
    [
        cluster.ClusterSpec(name="Bad"),
        cluster.ClusterSpec(name="toolongname"),
        cluster.ClusterSpec(workers=0),
        cluster.ClusterSpec(subnet="8.8.8"),
        cluster.ClusterSpec(subnet="10.300.0"),
        cluster.ClusterSpec(rate_mbit=0),
        cluster.ClusterSpec(cpu_cores=-1),
    ],
)
def test_bad_specs_are_refused(spec: cluster.ClusterSpec) -> None:
    with pytest.raises(ClusterError):
        spec.validate()


def test_token_bucket_holds_a_frame_and_scales_with_rate() -> None:
    slow = netns.tbf_args(10)
    fast = netns.tbf_args(1000)
    assert slow[:3] == ["tbf", "rate", "10mbit"]
    assert int(slow[4]) >= 32 * 1024
    assert int(fast[4]) == 500_000


# Real namespaces, real Spark.


@pytest.fixture
def clean_name() -> str:
    """The test cluster's name, with anything a crashed earlier run left removed first and
    everything removed again afterwards, however the test ends."""
    cluster.down(TEST_NAME)
    yield TEST_NAME
    cluster.down(TEST_NAME)


@pytest.mark.slow
@needs_cluster
def test_failed_up_leaves_nothing(clean_name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(ns: str, host_end: str, rate: float) -> None:
        raise ClusterError(f"simulated failure shaping {ns}")

    monkeypatch.setattr(netns, "shape_link", broken)
    spec = cluster.ClusterSpec(name=clean_name, subnet=TEST_SUBNET, rate_mbit=RATE_MBIT)
    with pytest.raises(ClusterError, match="simulated failure"):
        cluster.up(spec)
    assert _nothing_left(clean_name) == []
    assert cluster.ClusterState.load(clean_name) is None


def _executors_recorded(manifest, suffix: str, workers: set[str], out: Path) -> list:
    """One executor JVM per worker host, each recorded (``suffix``: the sampler's file) with
    the plugin's task events; the samples tied to tasks came from the workers' hosts."""
    from perfmodel.profile import bundle

    executors = [r for r in manifest.recordings if r.process.startswith("jvm executor")]
    assert len(executors) == 2, manifest.recordings
    assert all(r.task_events and r.samples > 0 and r.error is None for r in executors)
    assert all(r.path.endswith(suffix) for r in executors), executors
    samples = bundle.load_samples(out)
    tied = samples.filter(pc.is_valid(samples.column("task_id")))
    hosts = set(tied.column("host").to_pylist())
    assert hosts == workers, hosts
    return executors


@pytest.mark.slow
@needs_cluster
def test_record_on_a_two_worker_cluster(clean_name: str, tmp_path: Path) -> None:
    """Both JVM samplers on one run (``jvm_sampler="both"``): the bundle is read from JFR's
    recordings, as with "jfr", and the plugin's samples of the same run, written by the
    executors on the workers' hosts, make a plugin-only view of it, as "plugin" records."""
    from perfmodel.profile import bundle
    from perfmodel.profile.record.bundle_write import with_plugin_samples
    from perfmodel.profile.record.run import record
    from perfmodel.profile.record.setup import RecordOptions
    from perfmodel.spark.load import build_profile

    spec = cluster.ClusterSpec(
        name=clean_name, subnet=TEST_SUBNET, rate_mbit=RATE_MBIT, cpu_cores=WORKER_CPU
    )
    state = cluster.up(spec)
    workers = {n.namespace: n.address for n in state.workers}

    # The limit is on each worker's own link, inside its namespace and on the bridge's end.
    for node in state.workers:
        inside = netns.qdiscs(node.namespace, "eth0")
        assert "tbf" in inside and "rate 100Mbit" in inside, inside
        assert "rate 100Mbit" in netns.qdiscs(None, node.host_link)
    assert netns.qdiscs(state.master.namespace, "eth0").find("tbf") == -1

    out = tmp_path / "bundle"
    options = RecordOptions(
        out=out, daemon_pids=tuple(state.daemon_pids()), pyspy=False, jvm_sampler="both"
    )
    # The executors' JVMs start with the C1 compiler only and the serial collector, as the
    # suite's drivers do (tests/jvm_startup.py): 17 s less CPU of the test's 82 s for C1 alone
    # (one run each, 2026-11-29). PySpark splits the variable as a shell would.
    env = state.driver_env()
    executor_java = shlex.quote(f"spark.executor.extraJavaOptions={SPEED_OPTIONS}")
    env["PYSPARK_SUBMIT_ARGS"] = f"--conf {executor_java} pyspark-shell"
    result = record(state.driver_command([sys.executable, str(JOB), "300000"]), options, env)
    assert result.exit_code == 0, result.warnings

    executors = _executors_recorded(result.manifest, ".jfr", set(workers.values()), out)
    assert not any("no perfmodel plugin events" in w for w in result.warnings), result.warnings
    view = tmp_path / "plugin-view"
    seen = with_plugin_samples(out, view)
    assert seen.sampling["jvm_sampler"] == "plugin"
    assert not list((view / bundle.JFR_DIR).glob("*.jfr"))
    by_plugin = _executors_recorded(seen, ".jvmsamples", set(workers.values()), view)
    assert {r.executor_id for r in by_plugin} == {r.executor_id for r in executors}
    # The executors ran on the workers' hosts: this machine's cores are not theirs. But
    # they ran on this machine, each under its worker's CPU quota, which the bundle keeps.
    assert result.manifest.host_cores is None
    assert result.manifest.executor_hosts == {
        "machine_cores": usable_cores(),
        "executors": {r.executor_id: {"cpu_limit_cores": WORKER_CPU} for r in executors},
    }

    # Each JVM's whole CPU (JFR's jdk.CPULoad), scaled by the host's CPU count it recorded:
    # what the replay charges each executor beside its tasks.
    from perfmodel.profile import jvm_cpu

    measured = jvm_cpu.load(out)
    assert measured is not None
    assert {r.executor_id for r in executors} <= set(measured.series)
    for r in executors:
        series = measured.series[r.executor_id]
        assert series.t_ms.size >= 2 and series.core_seconds() > 0
        assert float(series.cores.max()) <= (os.cpu_count() or 1) + 0.01

    # The event log comes from the driver and says the same: 2 executors on the 2 hosts.
    loaded = build_profile(bundle.find_event_log(out))
    executor_hosts = {
        e.host for e in loaded.profile.executors.values() if e.executor_id != "driver"
    }
    assert executor_hosts == set(workers.values())
    import perfmodel

    analysis = perfmodel.load(out)
    assert analysis.profile.extra["executor_hosts"] == result.manifest.executor_hosts
    task_hosts = {t.host for s in loaded.profile.stages.values() for t in s.tasks}
    assert task_hosts == set(workers.values())
    # The driver's start-up beside the executors on this machine, from its threads' CPU
    # (`shared_machine.DriverStart`): what it used before its first job, and who started.
    start = analysis.workload.driver_start
    assert start is not None
    assert start.cpu_ms > 0 and 0 < start.want <= usable_cores()
    assert 0 <= start.starting <= 2 and start.quota == WORKER_CPU
    assert start.lag_ms > 0

    # Down removes everything: daemons, executors, namespaces, links, cgroups, state.
    pids = [n.pid for n in state.nodes] + [r.pid for r in executors]
    cluster.down(clean_name)
    assert _nothing_left(clean_name) == []
    assert not [p for p in pids if p is not None and psutil.pid_exists(p) and _is_ours(p)]
    assert cluster.ClusterState.load(clean_name) is None


def _is_ours(pid: int) -> bool:
    """A pid still used by a Spark process (not one the OS has since handed to another)."""
    try:
        return "spark" in " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return False


# Specs with master = "cluster" (the study's runs): parsed without root.


def _cluster_spec(tmp_path: Path, grid: str) -> Path:
    script = tmp_path / "job.py"
    script.write_text("print('hi')\n")
    spec = tmp_path / "spec.toml"
    spec.write_text(f'name = "c"\nscript = "job.py"\n[grid]\n{grid}\n')
    return spec


def test_cluster_grid_keeps_shapes_together_and_counts_worker_slots(tmp_path: Path) -> None:
    from perfmodel.experiment.spec import load_spec

    path = _cluster_spec(
        tmp_path,
        'master = ["cluster"]\nworkers = [2, 3]\nrate_mbit = [50, 1000]\n'
        'executor_memory = ["512m", "2g"]',
    )
    configs = load_spec(path).configs
    shapes = [(c.workers, c.rate_mbit) for c in configs]
    assert shapes == [(2, 50.0)] * 2 + [(2, 1000.0)] * 2 + [(3, 50.0)] * 2 + [(3, 1000.0)] * 2
    first = configs[0]
    assert first.name == "cluster workers=2 rate=50mbit executor=512m"
    assert first.cores == 2 and first.memory_bytes == 512 << 20
    assert "--master" not in first.submit_options()  # the cluster's conf dir names it
    assert first.as_dict()["workers"] == 2 and first.as_dict()["rate_mbit"] == 50.0


def test_local_configs_keep_their_settings(tmp_path: Path) -> None:
    from perfmodel.experiment.spec import load_spec

    config = load_spec(_cluster_spec(tmp_path, 'master = ["local[2]"]')).configs[0]
    assert config.submit_options()[:2] == ["--master", "local[2]"]
    assert "workers" not in config.as_dict()


@pytest.mark.parametrize(
    "grid",
    [
        'master = ["local[2]"]\nworkers = [2]',
        'master = ["local[2]"]\nrate_mbit = [100]',
        'master = ["cluster"]\nworkers = [0]',
        'master = ["cluster"]\nrate_mbit = [-5]',
        'master = ["spark://10.0.0.1:7077"]',
    ],
)
def test_bad_cluster_grids_are_refused(tmp_path: Path, grid: str) -> None:
    from perfmodel.experiment.spec import load_spec
    from perfmodel.experiment.spec_grid import SpecError

    with pytest.raises(SpecError):
        load_spec(_cluster_spec(tmp_path, grid))


STUDY_SPECS = sorted((Path(__file__).parents[2] / "experiments" / "cluster").glob("*.toml"))


@pytest.mark.parametrize("path", STUDY_SPECS, ids=[p.stem for p in STUDY_SPECS])
def test_study_specs_vary_one_resource_at_a_time_from_a_base(path: Path) -> None:
    from perfmodel.experiment.spec import load_spec
    from perfmodel.experiment.what_if_kind import MEMORY, NETWORK, WORKERS, changed_resources

    spec = load_spec(path)
    base, *others = [c.as_dict() for c in spec.configs]
    assert base["workers"] == 2 and base["executor_memory"] == "512m"  # the spilling heap
    kinds = [changed_resources(base, other) for other in others]
    assert sorted(kinds) == sorted([[NETWORK], [MEMORY], [WORKERS]])
    # Shapes (workers, rate) stay together: one cluster each.
    shapes = [(c.workers, c.rate_mbit) for c in spec.configs]
    changes = sum(1 for a, b in zip([None, *shapes[:-1]], shapes, strict=True) if a != b)
    assert len({*shapes}) == changes
    # The plan does not change with the resources.
    assert len({(c.shuffle_partitions, c.conf) for c in spec.configs}) == 1
    assert spec.params["size_mb"] == "1000"


def test_study_workers_are_capped_unless_told_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    from perfmodel.experiment.cluster_runs import WORKER_CPU, worker_cpu

    monkeypatch.delenv("PERFMODEL_CLUSTER_WORKER_CPU", raising=False)
    assert worker_cpu() == WORKER_CPU and 3 * WORKER_CPU <= 2
    monkeypatch.setenv("PERFMODEL_CLUSTER_WORKER_CPU", "none")
    assert worker_cpu() is None
    monkeypatch.setenv("PERFMODEL_CLUSTER_WORKER_CPU", "0.5")
    assert worker_cpu() == 0.5
    monkeypatch.setenv("PERFMODEL_CLUSTER_WORKER_CPU", "lots")
    with pytest.raises(ClusterError, match="PERFMODEL_CLUSTER_WORKER_CPU"):
        worker_cpu()


# The CLI commands (registered as `perfmodel cluster`), on a cluster that does not exist.


def test_cli_on_a_missing_cluster() -> None:
    from typer.testing import CliRunner

    from perfmodel.cli.cluster import cluster_app

    runner = CliRunner()
    shown = runner.invoke(cluster_app, ["status", "--name", "zz9"])
    assert shown.exit_code == 0 and "nothing exists" in shown.output
    as_json = runner.invoke(cluster_app, ["status", "--name", "zz9", "--json"])
    assert '"state_file": false' in as_json.output
    ran = runner.invoke(cluster_app, ["exec", "--name", "zz9", "--", "true"])
    assert isinstance(ran.exception, ClusterError) and "no cluster 'zz9'" in str(ran.exception)


def test_a_link_that_vanishes_while_down_deletes_it_is_done(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kernel drops a veth's host end on its own after `ip netns del` returns; `down` then
    finds the link listed and gone by the time it deletes it (a CI run failed so)."""
    listed = iter([["pmx-w1-h"], []])
    monkeypatch.setattr(netns, "links", lambda: next(listed))

    def failing(args: list[str], check: bool = True) -> None:
        raise ClusterError(f"`{' '.join(args)}` failed (exit 1): Cannot find device")

    monkeypatch.setattr(netns, "run", failing)
    netns.remove_link("pmx-w1-h")  # no error: the link is gone
    monkeypatch.setattr(netns, "links", lambda: ["pmx-w1-h"])
    with pytest.raises(ClusterError, match="pmx-w1-h"):
        netns.remove_link("pmx-w1-h")  # still there after a failed delete: an error
