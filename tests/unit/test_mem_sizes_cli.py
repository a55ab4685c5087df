"""``--mem`` with a ``b`` suffix is bytes, as Spark reads it: ``--mem 512b`` is refused as too
small by the same check and message as ``--mem 1k``."""

from __future__ import annotations

import pytest

from tests.cli_runner import invoke_cli


def _predict(mem: str) -> tuple[int, str]:
    # The range is checked as the option is read, before the log: no log is needed.
    result = invoke_cli(["predict", "no-such-log", "--mem", mem])
    return result.exit_code, result.output


@pytest.mark.parametrize("mem", ["1b", "512b", "1048575B"])
def test_a_size_in_bytes_below_the_range_is_refused_as_1k_is(mem: str) -> None:
    code, output = _predict(mem)
    assert code == 2
    assert output.strip() == (
        f"error: --mem must be a size from 1m to 1p (1 MiB to 1 PiB); got {mem!r}"
    )
    assert _predict("1k")[1].replace("'1k'", repr(mem)) == output
