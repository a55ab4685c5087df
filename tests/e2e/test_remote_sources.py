"""Remote logs through the sources layer, against real servers on loopback (tests/e2e/
conftest.py): moto's S3 server and a Spark History Server from pyspark's jars.

The answers on remote logs must be the local answers byte for byte, up to the name the log
was reached under (the ``source`` field and file names in messages)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from tests.cli_runner import invoke_cli
from tests.e2e.conftest import S3_LOGS, SHS_LOGS, FaultProxy, HistoryServer, S3Server

pytestmark = pytest.mark.slow


def run(
    args: list[str], env: dict[str, str | None] | None = None, *, own_process: bool = False
) -> tuple[int, str, str]:
    """The CLI in this process, or in one of its own for fleet (its worker processes must
    see ``env`` from their start, as from a shell) and where the credential chain must
    start from ``env`` (the AWS SDK keeps what it found in a process)."""
    if own_process or args[0] == "fleet":
        full = {**os.environ, **(env or {})}
        proc = subprocess.run(
            [sys.executable, "-c", "from perfmodel.cli import main; main()", *args],
            env={k: v for k, v in full.items() if v is not None},
            capture_output=True,
            text=True,
            timeout=600,
        )
        return proc.returncode, proc.stdout, proc.stderr
    result = invoke_cli(args, env=env, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _tables(out, rename: tuple[str, str] | None = None) -> dict[str, list[dict]]:
    tables = {}
    for name in ("apps", "stages", "findings", "errors"):
        rows = pq.read_table(out / f"{name}.parquet").to_pylist()
        for r in rows:
            r.pop("log_mtime_ns", None)  # the store's clock (S3: whole seconds), not the log's
            if rename and "log_path" in r:
                r["log_path"] = r["log_path"].replace(*rename)
        tables[name] = sorted(rows, key=lambda r: json.dumps(r, default=str, sort_keys=True))
    return tables


# ---------------------------------------------------------------------------------------------
# S3 (moto server)


@pytest.mark.parametrize("name", S3_LOGS)
def test_diagnose_on_s3_equals_local(s3_server: S3Server, name: str) -> None:
    code, local, _ = run(["diagnose", "--json", str(s3_server.local / name)])
    assert code == 0
    code, remote, err = run(["diagnose", "--json", s3_server.uri(name)], s3_server.env)
    assert code == 0, err
    assert remote == local.replace(str(s3_server.local), s3_server.uri())


def test_s3a_and_endpoint_option(s3_server: S3Server) -> None:
    name = S3_LOGS[0]
    _, local, _ = run(["diagnose", "--json", str(s3_server.local / name)])
    env = {k: v for k, v in s3_server.env.items() if k != "AWS_ENDPOINT_URL"}
    uri = s3_server.uri(name).replace("s3://", "s3a://")
    code, remote, err = run(["diagnose", "--json", uri, "--endpoint-url", s3_server.endpoint], env)
    assert code == 0, err
    assert remote == local.replace(str(s3_server.local), s3_server.uri())


def test_predict_on_s3_equals_local(s3_server: S3Server) -> None:
    name = "local-1776286786993.zstd"
    _, local, _ = run(["predict", "--json", str(s3_server.local / name), "--cores", "4"])
    code, remote, err = run(
        ["predict", "--json", s3_server.uri(name), "--cores", "4"], s3_server.env
    )
    assert code == 0, err
    assert remote == local.replace(str(s3_server.local), s3_server.uri())


def test_fleet_on_s3_prefix_equals_local_and_resumes(s3_server: S3Server, tmp_path) -> None:
    code, _, err = run(["fleet", str(s3_server.local), "--out", str(tmp_path / "l"), "--jobs", "1"])
    assert code == 0, err
    code, out, err = run(
        ["fleet", s3_server.uri(), "--out", str(tmp_path / "r"), "--jobs", "1", "--json"],
        s3_server.env,
    )
    assert code == 0, err
    summary = json.loads(out)
    assert summary["analysed_now"] == len(S3_LOGS) and summary["errors"] == 0
    local = _tables(tmp_path / "l", (str(s3_server.local), s3_server.uri()))
    assert _tables(tmp_path / "r") == local
    # Nothing changed on the store: a second run lists the prefix and analyses nothing.
    code, out, _ = run(
        ["fleet", s3_server.uri(), "--out", str(tmp_path / "r"), "--json"], s3_server.env
    )
    again = json.loads(out)
    assert (again["analysed_now"], again["skipped"]) == (0, len(S3_LOGS))
    manifest = pq.read_table(tmp_path / "r" / "_manifest.parquet").to_pylist()
    sizes = {r["log_path"]: r["log_size"] for r in manifest}
    rolling = s3_server.local / "eventlog_v2_local-1623876083964"
    assert sizes[s3_server.uri(rolling.name)] == sum(f.stat().st_size for f in rolling.iterdir())


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("s3://no-such-bucket-here/x.zstd", "No such bucket: s3://no-such-bucket-here"),
        ("s3://spark-logs/events/nope.zstd", "No event log at s3://spark-logs/events/nope.zstd"),
        ("s4://spark-logs/x", "unknown scheme s4://"),
        ("s3://AKIDEXAMPLE:secret@spark-logs/x", "credentials written into the URI"),
    ],
)
def test_s3_errors_are_one_line(s3_server: S3Server, uri: str, message: str) -> None:
    code, out, err = run(["diagnose", uri], s3_server.env)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert message in err
    assert "secret" not in err and "perfmodel-test-secret" not in err


# ---------------------------------------------------------------------------------------------
# Spark History Server


def _app_of(name: str) -> str:
    return name.removeprefix("eventlog_v2_").split(".")[0]


@pytest.mark.parametrize("name", SHS_LOGS)
def test_diagnose_from_history_server_equals_local(history_server: HistoryServer, name: str):
    local_path = history_server.log_dir / name
    _, local, _ = run(["diagnose", "--json", str(local_path)])
    app = _app_of(name)
    url = f"{history_server.url}/history/{app}"
    code, remote, err = run(["diagnose", "--json", url])
    assert code == 0, err
    assert remote == local.replace(str(local_path), url)
    code, by_id, err = run(["diagnose", "--json", "--history-server", history_server.url, app])
    assert code == 0, err
    assert by_id == remote


def test_fleet_from_history_server_agrees_with_local(history_server: HistoryServer, tmp_path):
    code, _, err = run(["fleet", str(history_server.log_dir), "--out", str(tmp_path / "l")])
    assert code == 0, err
    code, out, err = run(
        ["fleet", "--history-server", history_server.url, "--out", str(tmp_path / "h"), "--json"]
    )
    assert code == 0, err
    assert json.loads(out)["analysed_now"] == len(SHS_LOGS)
    local = _tables(tmp_path / "l")
    remote = _tables(tmp_path / "h")
    for table in ("apps", "stages", "findings"):
        strip = [
            {k: v for k, v in r.items() if k not in ("log_path", "log_size", "log_mtime_ns")}
            for r in local[table]
        ]
        got = [
            {k: v for k, v in r.items() if k not in ("log_path", "log_size", "log_mtime_ns")}
            for r in remote[table]
        ]
        key = lambda r: json.dumps(r, default=str, sort_keys=True)  # noqa: E731
        assert sorted(got, key=key) == sorted(strip, key=key), table
    # Applications already in the tables are not fetched again.
    code, out, _ = run(
        ["fleet", "--history-server", history_server.url, "--out", str(tmp_path / "h"), "--json"]
    )
    assert json.loads(out)["analysed_now"] == 0


def test_fleet_records_a_404_and_goes_on(history_server: HistoryServer, tmp_path) -> None:
    victim = history_server.apps[0]
    with FaultProxy(history_server.url, {f"/applications/{victim}/": "404"}) as proxy:
        code, out, err = run(
            ["fleet", "--history-server", proxy.url, "--out", str(tmp_path), "--json"]
        )
    assert code == 0, err
    summary = json.loads(out)
    assert summary["applications"] == len(SHS_LOGS) - 1 and summary["errors"] == 1
    errors = pq.read_table(tmp_path / "errors.parquet").to_pylist()
    assert victim in errors[0]["log_path"] and "HTTP 404" in errors[0]["reason"]


def test_followed_application_missing_for_a_while_is_waited_for(
    history_server: HistoryServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An application the server stops listing for a while (as it does between the scan
    that finds its `.inprogress` log gone and the one that lists the final log) is asked
    for again at the next poll; only a longer absence is an error."""
    from perfmodel.errors import EventLogNotFoundError
    from perfmodel.profile.sources import history
    from perfmodel.profile.sources.stores import SourceOptions

    app = history_server.apps[0]
    with FaultProxy(history_server.url) as proxy:
        log = history.live_history_log(f"{proxy.url}/history/{app}", SourceOptions(), 1 << 30, 0.0)
        store = log.store
        assert isinstance(store, history.LiveHistoryStore)
        names = [e.name for e in store.iter_dir(log.loc)]
        proxy.faults[f"/applications/{app}"] = "404"
        store.refresh()  # missing: what was read stays readable
        assert [e.name for e in store.iter_dir(log.loc)] == names
        assert proxy.hits.get(f"/api/v1/applications/{app}", 0) >= 2
        monkeypatch.setattr(history, "VANISHED_GRACE_S", 0.0)
        with pytest.raises(EventLogNotFoundError, match="HTTP 404"):
            store.refresh()


def test_server_going_away_mid_read_is_retried(history_server: HistoryServer) -> None:
    app = _app_of(SHS_LOGS[0])
    _, direct, _ = run(["diagnose", "--json", f"{history_server.url}/history/{app}"])
    with FaultProxy(history_server.url, {"/logs": "cut_once"}) as proxy:
        code, out, err = run(["diagnose", "--json", f"{proxy.url}/history/{app}"])
        assert sum(n for p, n in proxy.hits.items() if p.endswith("/logs")) == 2
    assert code == 0, err
    assert out == direct.replace(history_server.url, proxy.url)


def test_server_going_away_every_time_is_one_error(history_server: HistoryServer) -> None:
    app = _app_of(SHS_LOGS[0])
    with FaultProxy(history_server.url, {"/logs": "cut"}) as proxy:
        code, out, err = run(["diagnose", f"{proxy.url}/history/{app}"])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "no answer after 4 tries (the answer was cut off)" in err


def test_truncated_zip_is_one_error(history_server: HistoryServer) -> None:
    app = _app_of(SHS_LOGS[0])
    with FaultProxy(history_server.url, {"/logs": "truncate"}) as proxy:
        code, _, err = run(["diagnose", f"{proxy.url}/history/{app}"])
    assert code == 2 and err.startswith("error: ") and "damaged or cut off" in err


def test_slow_server_times_out(history_server: HistoryServer) -> None:
    app = _app_of(SHS_LOGS[0])
    with FaultProxy(history_server.url, {"/logs": "slow"}, delay_s=3.0) as proxy:
        code, _, err = run(["diagnose", "--timeout-s", "0.5", f"{proxy.url}/history/{app}"])
    assert code == 2 and "no answer after 4 tries (timed out)" in err


@pytest.mark.parametrize(("code_path", "message"), [("/history/nope-123", "not found (HTTP 404)")])
def test_unknown_application_is_one_error(history_server: HistoryServer, code_path, message):
    code, _, err = run(["diagnose", history_server.url + code_path])
    assert code == 2 and message in err and err.count("\n") == 1
