"""How `perfmodel record` adds its settings: appended to the user's, never replacing them."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfmodel.profile import bundle
from perfmodel.profile.record import bundle_write
from perfmodel.profile.record.setup import (
    RecordOptions,
    merged_defaults,
    parse_defaults,
    write_conf_dir,
)

USER = """# the user's own defaults
spark.plugins.defaultList   com.example.AdminPlugin
spark.driver.defaultJavaOptions=-Dfoo=1
spark.eventLog.dir: file:/var/log/spark-events
spark.executor.memory 2g
"""


def test_user_values_are_extended_and_kept() -> None:
    text = merged_defaults(
        USER,
        {
            "spark.plugins.defaultList": ("perfmodel.spark.PerfmodelPlugin", ","),
            "spark.driver.defaultJavaOptions": ("-XX:StartFlightRecording=x", " "),
        },
        {"spark.eventLog.dir": "file:/bundle/eventlog", "spark.eventLog.enabled": "true"},
    )
    assert text.startswith(USER.rstrip("\n"))
    merged = parse_defaults(text)
    assert merged["spark.plugins.defaultList"] == (
        "com.example.AdminPlugin,perfmodel.spark.PerfmodelPlugin"
    )
    assert merged["spark.driver.defaultJavaOptions"] == "-Dfoo=1 -XX:StartFlightRecording=x"
    assert merged["spark.eventLog.dir"] == "file:/var/log/spark-events"  # the user's choice
    assert merged["spark.eventLog.enabled"] == "true"
    assert merged["spark.executor.memory"] == "2g"


def test_conf_dir_copies_the_users_files(tmp_path: Path) -> None:
    user = tmp_path / "conf"
    user.mkdir()
    (user / "spark-defaults.conf").write_text(USER)
    (user / "log4j2.properties").write_text("rootLogger.level = warn\n")
    out = tmp_path / "bundle"
    bundle_write.prepare_directory(out)
    jar = tmp_path / "plugin.jar"
    # JFR, whose flight-recording options are merged with the user's below.
    jfr_options = RecordOptions(out=out, jvm_sampler="jfr")
    conf = write_conf_dir(out, {"SPARK_CONF_DIR": str(user)}, jfr_options, jar)
    assert (conf / "log4j2.properties").read_text() == "rootLogger.level = warn\n"
    merged = parse_defaults((conf / "spark-defaults.conf").read_text())
    assert merged["spark.driver.defaultExtraClassPath"] == str(jar)
    assert "-XX:StartFlightRecording=filename=" in merged["spark.executor.defaultJavaOptions"]
    assert "stackdepth=2048" in merged["spark.driver.defaultJavaOptions"]
    assert (out / "raw" / "perfmodel.jfc").is_file()


def test_an_existing_bundle_is_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(bundle.BundleError, match="not empty"):
        bundle_write.prepare_directory(tmp_path)
