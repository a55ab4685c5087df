"""The JFR reader on real recordings of a small Java program, and on bad input."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pyarrow.compute as pc
import pytest

from perfmodel.profile import jfr

SPIN = """
import java.io.FileInputStream;
import java.security.MessageDigest;

public class Spin {
  public static void main(String[] args) throws Exception {
    Runnable hash = () -> {
      try {
        MessageDigest md = MessageDigest.getInstance("SHA-512");
        byte[] block = new byte[4096];
        long end = System.currentTimeMillis() + 1500;
        while (System.currentTimeMillis() < end) { md.update(block); md.digest(); }
      } catch (Exception e) { throw new RuntimeException(e); }
    };
    Thread t = new Thread(hash, "hasher");
    t.start();
    t.join();
  }
}
"""


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real recording made with perfmodel's own settings (javac + java, ~3 s).

    The SHA-512 intrinsic is switched off: JFR cannot walk a stack out of an intrinsic
    stub, so once C2 compiles the digest loop the thread yields almost no samples (about
    nine in 3 s, some without a SHA frame) — a real blind spot of JFR, but this test is
    about reading the frames that JFR does record.
    """
    tmp = tmp_path_factory.mktemp("jfr")
    (tmp / "Spin.java").write_text(SPIN)
    subprocess.run(["javac", "Spin.java"], cwd=tmp, check=True)
    settings = tmp / "perfmodel.jfc"
    settings.write_text(jfr.jfc_settings(20))
    out = tmp / "spin.jfr"
    subprocess.run(
        [
            "java",
            f"-XX:StartFlightRecording=filename={out},settings={settings}",
            f"-XX:FlightRecorderOptions=stackdepth={jfr.STACK_DEPTH}",
            "-Xlog:jfr+startup=error",
            "-XX:+UnlockDiagnosticVMOptions",
            "-XX:-UseSHA512Intrinsics",
            "-cp",
            str(tmp),
            "Spin",
        ],
        check=True,
        capture_output=True,
    )
    return out


def test_reads_real_frames_and_jvm_facts(recording: Path) -> None:
    (rec,) = jfr.read_recordings([recording])
    assert rec.error is None
    assert rec.pid is not None and "Spin" in rec.java_arguments
    assert rec.periods_ms["jdk.ExecutionSample"] == 20.0
    assert rec.periods_ms["jdk.NativeMethodSample"] == jfr.default_native_interval(20) == 5.0
    samples = rec.samples
    hasher = samples.filter(pc.equal(samples.column("thread"), "hasher"))
    assert hasher.num_rows > 0
    leaves = {stack[-1] for stack in hasher.column("frames").to_pylist()}
    frames = {f for stack in hasher.column("frames").to_pylist() for f in stack}
    assert "Spin.lambda$main$0" in frames  # root-first stacks reach the program's own code
    assert any(f.startswith("sun.security.provider.SHA") for f in leaves | frames)
    assert not rec.has_task_events  # no Spark plugin here
    assert pc.all(pc.is_null(samples.column("task_id"))).as_py()
    weights = samples.column("weight_ms").to_numpy()
    assert (weights > 0).all()


def test_timestamps_are_wall_clock(recording: Path) -> None:
    (rec,) = jfr.read_recordings([recording])
    ts = rec.samples.column("timestamp_ms").to_numpy()
    mtime_ms = recording.stat().st_mtime * 1000
    assert (ts <= mtime_ms + 1000).all() and (ts >= mtime_ms - 120_000).all()


def test_not_a_recording_is_reported_not_raised(tmp_path: Path, recording: Path) -> None:
    bogus = tmp_path / "notes.jfr"
    bogus.write_text("this is not a flight recording\n")
    bad, good = jfr.read_recordings([bogus, recording])
    assert bad.error is not None and "not a readable JFR file" in bad.error
    assert bad.samples.num_rows == 0
    assert good.error is None and good.samples.num_rows > 0


def test_cut_off_recording_keeps_what_precedes_the_damage(tmp_path: Path, recording: Path) -> None:
    data = recording.read_bytes()
    cut = tmp_path / "cut.jfr"
    cut.write_bytes(data[: len(data) // 2])
    (rec,) = jfr.read_recordings([cut])
    assert rec.error is not None or rec.warnings  # one clear message, no exception


def test_missing_java_and_missing_jar_are_clear(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(jfr.JAR_ENV, str(tmp_path / "nope.jar"))
    with pytest.raises(jfr.JfrError, match="jvm/build.sh"):
        jfr.plugin_jar()
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(jfr.JfrError, match="no Java runtime"):
        jfr.java_executable()
