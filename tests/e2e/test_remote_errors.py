"""What a new user sees when a remote source cannot be read: one ``error:`` line, exit
status 2, and no long wait. Against real servers on loopback (moto's S3 server, a socket
that never takes a connection, a closed port) and the real cloud clients with no
credentials to find."""

from __future__ import annotations

import http.server
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import _stop, _wait_http, free_port

pytestmark = pytest.mark.slow

HANG_GUARD_S = 300
"""Only so that a hang fails the test instead of stalling the suite (not a time target)."""
CREDENTIAL_VARS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_CONFIG",
    "GOOGLE_GCLOUD_ADC_PATH_OVERRIDE",
    "CLOUD_STORAGE_EMULATOR_ENDPOINT",
    "GCE_METADATA_HOST",
    "GCE_METADATA_ROOT",
    "AZURE_CLIENT_ID",
    "AZURE_TENANT_ID",
    "AZURE_CLIENT_SECRET",
    "AZURE_FEDERATED_TOKEN_FILE",
    "AZURE_TOKEN_CREDENTIALS",
    "IDENTITY_ENDPOINT",
    "MSI_ENDPOINT",
)


def cli(args: list[str], home: Path, **env: str) -> tuple[int, str, str]:
    """The CLI in a process of its own, with no credentials in its environment or home
    (a new user's), plus ``env``."""
    full = {k: v for k, v in os.environ.items() if k not in CREDENTIAL_VARS}
    full.update(
        HOME=str(home),
        AWS_SHARED_CREDENTIALS_FILE=str(home / "no-aws-credentials"),
        AWS_CONFIG_FILE=str(home / "no-aws-config"),
        AWS_EC2_METADATA_DISABLED="true",
        AWS_REGION="us-east-1",
        **env,
    )
    proc = subprocess.run(
        [sys.executable, "-c", "from perfmodel.cli import main; main()", *args],
        env=full,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    return proc.returncode, proc.stdout, proc.stderr


def one_error(code: int, out: str, err: str) -> str:
    assert code == 2, err
    assert out == ""
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


@pytest.fixture
def unanswered() -> Iterator[int]:
    """A loopback port whose listening socket never takes a connection: its queue is full,
    so the kernel drops further connection attempts, as a firewall or a wrong address
    does."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    queued = []
    for _ in range(4):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        queued.append(s)
    probe = socket.socket()
    probe.settimeout(1)
    try:
        probe.connect(("127.0.0.1", port))
        pytest.skip("this kernel accepted past a full queue: cannot make a silent port")
    except TimeoutError:
        pass
    finally:
        probe.close()
    yield port
    for s in [*queued, server]:
        s.close()


def closed_port() -> int:
    return free_port()  # bound, released: nothing listens there


def test_history_server_that_takes_no_connection(unanswered: int, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{unanswered}/history/app-20161115172038-0000"
    err = one_error(*cli(["diagnose", "--timeout-s", "2", url], tmp_path))
    assert "no connection within 2 s" in err


def test_history_server_refusing_connections(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    err = one_error(*cli(["diagnose", "--history-server", url, "app-1"], tmp_path))
    assert "no answer after 4 tries (connection refused)" in err


@pytest.fixture
def web_page_server() -> Iterator[str]:
    """A loopback HTTP server that answers every path with a web page, as a History Server
    does before its REST API is attached, or a proxy's sign-in page."""

    class Page(http.server.BaseHTTPRequestHandler):
        def log_message(self, *_args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            body = b"<!DOCTYPE html><html><body>Spark History Server</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("form", ["--history-server", "url", "fleet"])
def test_history_server_answering_with_a_web_page(
    web_page_server: str, form: str, tmp_path: Path
) -> None:
    """The download of an application's logs (named by --history-server or by its URL) and
    the listing of applications (fleet over the server) each say what came back."""
    args = {
        "--history-server": ["diagnose", "--history-server", web_page_server, "app-1"],
        "url": ["diagnose", f"{web_page_server}/history/app-1"],
        "fleet": ["fleet", "--history-server", web_page_server, "--out", str(tmp_path / "f")],
    }[form]
    err = one_error(*cli(args, tmp_path))
    assert "answered with a web page, not the History Server's REST API" in err


def test_s3_endpoint_that_takes_no_connection(unanswered: int, tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{unanswered}"
    args = ["diagnose", "--endpoint-url", endpoint, "--timeout-s", "2", "s3://logs/app.zstd"]
    err = one_error(*cli(args, tmp_path, AWS_ACCESS_KEY_ID="a", AWS_SECRET_ACCESS_KEY="b"))
    assert f"no connection to the endpoint 127.0.0.1:{unanswered} within 2 s" in err


def test_s3_endpoint_refusing_connections(tmp_path: Path) -> None:
    endpoint = f"http://127.0.0.1:{closed_port()}"
    args = ["diagnose", "--endpoint-url", endpoint, "s3://logs/app.zstd"]
    err = one_error(*cli(args, tmp_path, AWS_ACCESS_KEY_ID="a", AWS_SECRET_ACCESS_KEY="b"))
    assert "the store could not be reached" in err


@pytest.fixture(scope="module")
def s3_with_auth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3 server checking every request's signature against the access keys it
    knows (none), as S3 does."""
    pytest.importorskip("moto", reason="moto[server] (the dev extra) is not installed")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "0"},
        start_new_session=True,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _wait_http(endpoint + "/moto-api/", lambda _b: True, 60, proc)
        yield endpoint
    finally:
        _stop(proc)


def test_s3_with_credentials_the_store_does_not_know(s3_with_auth: str, tmp_path: Path) -> None:
    args = ["diagnose", "--endpoint-url", s3_with_auth, "s3://spark-logs/events/app.zstd"]
    code, out, err = cli(
        args, tmp_path, AWS_ACCESS_KEY_ID="AKIAUNKNOWN", AWS_SECRET_ACCESS_KEY="not-a-secret"
    )
    err = one_error(code, out, err)
    assert "access denied" in err and "not-a-secret" not in err


def test_s3_with_no_credentials(s3_with_auth: str, tmp_path: Path) -> None:
    args = ["diagnose", "--endpoint-url", s3_with_auth, "s3://spark-logs/events/app.zstd"]
    err = one_error(*cli(args, tmp_path))
    assert err.startswith("error: s3://spark-logs/events/app.zstd: ")


def test_gcs_with_no_credentials(tmp_path: Path) -> None:
    try:
        socket.getaddrinfo("metadata.google.internal", 80)
        pytest.skip("on Google Cloud: the metadata server is a credential source here")
    except OSError:
        pass
    err = one_error(*cli(["diagnose", "gs://spark-logs/events/app.zstd"], tmp_path))
    assert "no Google Cloud credentials found" in err and "GOOGLE_APPLICATION_CREDENTIALS" in err


def test_abfs_with_no_credentials(tmp_path: Path) -> None:
    if shutil.which("az"):
        pytest.skip("the Azure CLI is installed: it may hold credentials")
    uri = "abfss://logs@perfmodeltest.dfs.core.windows.net/events/app.zstd"
    err = one_error(*cli(["diagnose", uri], tmp_path))
    assert "DefaultAzureCredential" in err
