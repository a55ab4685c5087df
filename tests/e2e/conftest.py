"""Real servers on loopback for the remote-source tests, each started once per session.

* `s3_server`: moto in server mode (a real S3-protocol HTTP server), with a bucket holding
  copies of real logs from ../shared (a plain file, zstd files, a rolling directory).
* `history_server`: a real Spark History Server from pyspark's own jars, scanning a temp
  directory of copies of real logs.
* `FaultProxy`: a loopback HTTP proxy in front of the History Server that forwards its
  real answers, but can cut one off, truncate it, delay it or answer 404 for one path:
  the faults a flaky network and server produce, around the real protocol.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import SHARED_EVENTLOGS

S3_LOGS = [
    "local-1776286786993.zstd",
    "spark2-eventlog.zstd",
    "application_1489705648216_1600",
    "eventlog_v2_local-1623876083964",
]
"""Uploaded to the S3 server: zstd files, a plain file and a rolling directory."""
SHS_LOGS = [
    "local-1776286786993.zstd",
    "app-20161115172038-0000",
    "eventlog_v2_local-1623876083964",
]
BUCKET = "spark-logs"
PREFIX = "events"
S3_ENV = {
    "AWS_ACCESS_KEY_ID": "perfmodel-test",
    "AWS_SECRET_ACCESS_KEY": "perfmodel-test-secret",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_http(
    url: str, ok: Callable[[bytes], bool], timeout_s: float, proc: subprocess.Popen
) -> None:
    deadline = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if ok(resp.read()):
                    return
        except OSError as e:
            last = str(e)
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer in {timeout_s} s ({last})")


def _stop(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@dataclass(frozen=True)
class S3Server:
    endpoint: str
    env: dict[str, str]
    local: Path
    """The local copies of what was uploaded under s3://BUCKET/PREFIX/."""

    def uri(self, name: str = "") -> str:
        return f"s3://{BUCKET}/{PREFIX}/{name}".rstrip("/")


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    if not SHARED_EVENTLOGS.is_dir():
        pytest.skip(f"shared event logs not found at {SHARED_EVENTLOGS} (../shared is absent)")
    pytest.importorskip("moto", reason="moto[server] (the dev extra) is not installed")
    import pyarrow.fs as pafs

    port = free_port()
    env = {**os.environ, **S3_ENV}
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _wait_http(endpoint + "/", lambda _b: True, 60, proc)
        local = tmp_path_factory.mktemp("s3-local") / PREFIX
        local.mkdir()
        fs = pafs.S3FileSystem(
            endpoint_override=f"127.0.0.1:{port}",
            scheme="http",
            region="us-east-1",
            access_key=S3_ENV["AWS_ACCESS_KEY_ID"],
            secret_key=S3_ENV["AWS_SECRET_ACCESS_KEY"],
            allow_bucket_creation=True,
        )
        fs.create_dir(BUCKET)
        for name in S3_LOGS:
            src = SHARED_EVENTLOGS / name
            files = sorted(src.iterdir()) if src.is_dir() else [src]
            for f in files:
                rel = f.relative_to(SHARED_EVENTLOGS).as_posix()
                with fs.open_output_stream(f"{BUCKET}/{PREFIX}/{rel}") as out:
                    out.write(f.read_bytes())
                (local / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, local / rel)
        yield S3Server(endpoint, {**S3_ENV, "AWS_ENDPOINT_URL": endpoint}, local)
    finally:
        _stop(proc)


@dataclass(frozen=True)
class HistoryServer:
    url: str
    log_dir: Path
    apps: list[str]


def _spark_home() -> Path:
    """The suite's Spark home (`tests.jvm_startup`), whose class path the drivers' class-data
    archive was dumped with, else PySpark's own."""
    if os.environ.get("SPARK_HOME"):
        return Path(os.environ["SPARK_HOME"])
    import pyspark

    return Path(pyspark.__file__).parent


@contextlib.contextmanager
def running_history_server(log_dir: Path, out_dir: Path, apps_expected: int) -> Iterator[str]:
    """A History Server on ``log_dir`` (rescanned every second) until the block ends; waits
    until it lists ``apps_expected`` applications."""
    port = free_port()
    home = _spark_home()
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_NO_DAEMONIZE": "1",
        "SPARK_LOG_DIR": str(out_dir),
        "SPARK_HISTORY_OPTS": " ".join(
            [
                f"-Dspark.history.fs.logDirectory=file:{log_dir}",
                f"-Dspark.history.ui.port={port}",
                "-Dspark.history.fs.update.interval=1s",
                "-Dspark.ui.bindAddress=127.0.0.1",
                "-Dspark.driver.host=127.0.0.1",
            ]
        ),
    }
    proc = subprocess.Popen(
        [str(home / "bin" / "spark-class"), "org.apache.spark.deploy.history.HistoryServer"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_http(url + "/api/v1/applications", _lists(apps_expected), 180, proc)
        yield url
    finally:
        _stop(proc)


def _lists(apps_expected: int) -> Callable[[bytes], bool]:
    """Whether a History Server's answer lists ``apps_expected`` applications. While it starts,
    the server can answer the REST path with its web UI's HTML page (the API's handler is
    attached after the UI's): not an answer yet."""

    def ready(body: bytes) -> bool:
        try:
            apps = json.loads(body)
        except ValueError:
            return False
        return isinstance(apps, list) and len(apps) >= apps_expected

    return ready


def need_history_server_parts() -> None:
    if not SHARED_EVENTLOGS.is_dir():
        pytest.skip(f"shared event logs not found at {SHARED_EVENTLOGS} (../shared is absent)")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java: the History Server needs a JVM")


@pytest.fixture(scope="session")
def history_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HistoryServer]:
    need_history_server_parts()
    log_dir = tmp_path_factory.mktemp("shs-logs")
    for name in SHS_LOGS:
        src = SHARED_EVENTLOGS / name
        if src.is_dir():
            shutil.copytree(src, log_dir / name)
        else:
            shutil.copyfile(src, log_dir / name)
    out = tmp_path_factory.mktemp("shs-out")
    with running_history_server(log_dir, out, len(SHS_LOGS)) as url:
        with urllib.request.urlopen(url + "/api/v1/applications", timeout=10) as resp:
            apps = sorted(a["id"] for a in json.loads(resp.read()))
        yield HistoryServer(url, log_dir, apps)


@dataclass
class FaultProxy:
    """Forwards GETs to ``upstream``; ``faults`` maps a path substring to what goes wrong:
    ``cut`` (half the body, then the connection closes: the server going away mid-read),
    ``cut_once`` (that, for the first request only), ``truncate`` (half the body, sent as if
    whole), ``slow`` (an answer only after ``delay_s``), ``404``."""

    upstream: str
    faults: dict[str, str] = field(default_factory=dict)
    delay_s: float = 5.0
    hits: dict[str, int] = field(default_factory=dict)
    url: str = ""
    _server: http.server.ThreadingHTTPServer | None = None

    def __enter__(self) -> FaultProxy:
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *_args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                fault = next((f for k, f in proxy.faults.items() if k in self.path), None)
                proxy.hits[self.path] = proxy.hits.get(self.path, 0) + 1
                if fault == "404":
                    self.send_error(404)
                    return
                if fault == "slow":
                    time.sleep(proxy.delay_s)
                try:
                    with urllib.request.urlopen(proxy.upstream + self.path, timeout=30) as r:
                        body, status, ctype = r.read(), r.status, r.headers["Content-Type"]
                except urllib.error.HTTPError as e:
                    self.send_error(e.code)
                    return
                except OSError:  # the upstream is gone (a test's teardown)
                    with contextlib.suppress(OSError):
                        self.send_error(502)
                    return
                first = proxy.hits[self.path] == 1
                if fault == "truncate":
                    body = body[: len(body) // 2]
                self.send_response(status)
                self.send_header("Content-Type", ctype or "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if fault == "cut" or (fault == "cut_once" and first):
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
