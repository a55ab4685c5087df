"""Names shortened for the terminal tables (the JSON keeps them whole)."""

from __future__ import annotations

from perfmodel.analysis.diagnosis import short_function, short_name


def test_python_frames_keep_the_end_of_their_path() -> None:
    venv = "/home/u/.venv/lib/python3.11/site-packages/pyspark"
    assert (
        short_function(
            f"ExternalMerger.mergeValues ({venv}/python/lib/pyspark.zip/pyspark/shuffle.py)"
        )
        == "ExternalMerger.mergeValues (…/pyspark/shuffle.py)"
    )
    assert short_function("f (/x/app.py)") == "f (/x/app.py)"
    assert (
        short_function("_compile_source (<frozen zipimport>)")
        == "_compile_source (<frozen zipimport>)"
    )
    assert short_function("sun.nio.ch.EPoll.wait") == "sun.nio.ch.EPoll.wait"


def test_long_names_are_cut_to_the_width() -> None:
    name = "org.apache.spark." + "x" * 200
    assert len(short_function(name, width=40)) == 40 and short_function(name, 40).endswith("…")
    assert short_name("reduceByKey at /a/b/job.py:60") == "reduceByKey at job.py:60"
