"""The plugin's idle-thread exclusion on a real JVM: parked threads leave JFR's native samples
to the threads that work, and a JVM without access to JFR's switch says so."""

from __future__ import annotations

import collections
import subprocess
from pathlib import Path

import pyarrow.compute as pc
import pytest

from perfmodel.profile import jfr, sample_dump

PARKED = """
import java.net.ServerSocket;
import java.net.Socket;

public class Parked {
  static Thread blocked(String name, ServerSocket server) {
    Thread t = new Thread(() -> {
      try { server.accept().getInputStream().read(); } catch (Exception e) { }
    }, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  public static void main(String[] args) throws Exception {
    ServerSocket b = new ServerSocket(0), c = new ServerSocket(0);
    // The JDK's own reaper, as in Spark: pooled (parked) after a first short process, then
    // waiting in native code for a long one, under a name that may carry the pid.
    new ProcessBuilder("true").start().waitFor();
    blocked("rpc-boss-3-1", b);
    blocked("worker", c);
    Socket toWorker = new Socket("127.0.0.1", c.getLocalPort());  // worker blocks in read()
    Thread.sleep(200);
    perfmodel.spark.IdleThreadExcluder.startOnce();
    Thread.sleep(700);
    Process sleeper = new ProcessBuilder("sleep", "30").start();
    Thread.sleep(2500);
    sleeper.destroy();
    toWorker.close();
  }
}
"""


def _record(tmp: Path, *java_options: str) -> jfr.JfrRecording:
    jar = jfr.plugin_jar()
    if not (tmp / "Parked.class").exists():
        (tmp / "Parked.java").write_text(PARKED)
        subprocess.run(["javac", "-cp", str(jar), "Parked.java"], cwd=tmp, check=True)
    settings = tmp / "perfmodel.jfc"
    settings.write_text(jfr.jfc_settings(20, 20))
    out = tmp / f"parked-{len(java_options)}.jfr"
    subprocess.run(
        [
            "java",
            f"-XX:StartFlightRecording=filename={out},settings={settings}",
            "-Xlog:jfr+startup=error",
            *java_options,
            "-cp",
            f"{tmp}:{jar}",
            "Parked",
        ],
        check=True,
        capture_output=True,
    )
    (rec,) = jfr.read_recordings([out])
    assert rec.error is None
    return rec


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("exclusion")


def _native_by_thread(rec: jfr.JfrRecording) -> collections.Counter[str]:
    native = rec.samples.filter(pc.equal(rec.samples.column("kind"), "native"))
    return collections.Counter(native.column("thread").to_pylist())


def test_parked_threads_are_excluded_and_the_worker_gets_the_native_samples(
    workdir: Path,
) -> None:
    rec = _record(workdir, jfr.ADD_EXPORTS)
    # The reaper's name carries the pid of the process it waits for on recent JDK 17 updates.
    excluded = sorted(name.split(" (pid ")[0] for name in rec.excluded_threads)
    assert excluded == ["process reaper", "rpc-boss-3-1"]
    assert not rec.warnings
    counts = _native_by_thread(rec)  # JFR keeps the name a thread started with
    # ~150 native periods of 20 ms; the worker shares them only until each exclusion.
    assert counts["worker"] >= 60, counts
    assert counts["worker"] > 5 * max(counts["process reaper"], counts["rpc-boss-3-1"]), counts


def test_without_access_to_jfr_internals_nothing_is_excluded_and_it_says_why(
    workdir: Path,
) -> None:
    rec = _record(workdir)
    assert rec.excluded_threads == []
    (warning,) = rec.warnings
    assert "could not take idle threads out of sampling" in warning and jfr.ADD_EXPORTS in warning
    counts = _native_by_thread(rec)
    assert counts["process reaper"] > 20 and counts["worker"] > 20, counts


def test_an_excluder_that_stopped_is_reported_without_the_flag_hint() -> None:
    lines = [
        "R\tstopped.jfr",
        "X\t7\tprocess reaper\tJDK process reaper: waits for child processes to exit",
        "X\t-1\t\tstopped: java.lang.IllegalStateException: boom",
        "D\t0\t0",
    ]
    (rec,) = sample_dump.parse_dump(lines, ["stopped.jfr"])
    assert rec.excluded_threads == ["process reaper"]
    (warning,) = rec.warnings
    assert "stopped: java.lang.IllegalStateException: boom" in warning
    assert jfr.ADD_EXPORTS not in warning
