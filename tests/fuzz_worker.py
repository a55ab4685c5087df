"""A long-lived process that runs perfmodel commands for the fuzz tests, one per request.

Starting Python and importing perfmodel costs about a second, more than most damaged inputs
take to analyse; a worker pays it once. It still runs every command in a process of its own,
apart from pytest, so a hang is caught by the test killing the worker (a timeout around a
call in the same process cannot interrupt a regular expression or a C decoder).

Protocol: one JSON object per line on stdin, one answer per line on stdout.
``{"argv": [...]}`` runs the CLI with typer's CliRunner; ``{"quality": path}`` reads a log
with the library and answers its `DataQuality` counts (or the `PerfmodelError` it raised).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import traceback
from typing import Any

from perfmodel.errors import PerfmodelError
from perfmodel.spark.load import build_profile
from tests.cli_runner import invoke_cli

MAX_OUTPUT = 20_000


def run_cli(argv: list[str]) -> dict[str, Any]:
    result = invoke_cli(argv)
    exc = result.exception
    crashed = exc is not None and not isinstance(exc, SystemExit)
    trace = ""
    if crashed and result.exc_info is not None:
        trace = "".join(traceback.format_exception(*result.exc_info))[-4000:]
    output = result.output
    return {
        "exit_code": result.exit_code,
        "output": output[:MAX_OUTPUT] + output[-2000:] if len(output) > MAX_OUTPUT else output,
        "crash": f"{type(exc).__name__}: {exc}"[:2000] if crashed else None,
        "traceback": trace,
        "json": _json_or_none(output),
    }


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject)
    except ValueError:
        return None


def _reject(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_quality(path: str) -> dict[str, Any]:
    try:
        loaded = build_profile(path)
    except PerfmodelError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:2000]}
    except Exception as exc:  # a crash is what the tests look for; report it, keep serving
        return {"crash": f"{type(exc).__name__}: {exc}"[:2000], "traceback": traceback.format_exc()}
    return {"quality": loaded.quality.as_dict()}


MEMORY_LIMIT_ENV = "PERFMODEL_TEST_MEMORY_LIMIT"
"""Bytes of address space the worker may use (`resource.RLIMIT_AS`), set by the tests: a
command whose memory grows with a number in its input, not with the data, meets a
MemoryError here (a crash, which the tests report) instead of exhausting the machine."""


def _limit_memory() -> None:
    limit = int(os.environ.get(MEMORY_LIMIT_ENV, "0"))
    if limit > 0:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main() -> None:
    _limit_memory()
    # Answers go to a private copy of stdout; anything else written to file descriptor 1
    # (a library printing past CliRunner) lands on stderr instead of in the protocol.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    for line in sys.stdin:
        request = json.loads(line)
        if "argv" in request:
            answer = run_cli(request["argv"])
        else:
            answer = read_quality(request["quality"])
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
