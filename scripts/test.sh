#!/usr/bin/env bash
# `make test`: the static checks (`make lint docs wheel-check`) beside the test suite.
#
#   scripts/test.sh PYTEST_COMMAND...
#
# The static checks (mypy, the docs site, the wheel built and installed in a clean venv) take
# 20-55 s, most of it mypy on a fresh clone with no cache, and mostly on one core: run before
# the suite they hold one core while the other idles, and their whole time adds to the run's.
# Beside the suite, which keeps both cores busy, they share the two cores with it and add about
# half that. Their output goes to build/checks.log and is printed after the tests', so that it
# does not break into pytest's progress lines. The exit status is the tests' when they failed,
# else the checks'. Ctrl-C stops both.
set -uo pipefail
cd "$(dirname "$0")/.."
if (($# == 0)); then
  echo "usage: scripts/test.sh PYTEST_COMMAND..." >&2
  exit 2
fi
mkdir -p build
log=build/checks.log
# A session of its own: one process group to stop on Ctrl-C (a background job of a script
# ignores the terminal's SIGINT).
setsid -w "${MAKE:-make}" --no-print-directory --keep-going lint docs wheel-check \
  >"$log" 2>&1 </dev/null &
checks=$!
stop_checks() {
  kill -TERM -- "-$checks" 2>/dev/null
  wait "$checks" 2>/dev/null
  exit 130
}
trap stop_checks INT TERM

"$@"
tests=$?
wait "$checks"
static=$?
trap - INT TERM

echo "== make lint docs wheel-check (beside the tests; build/checks.log) =="
cat "$log"
if ((tests != 0)); then
  exit "$tests"
fi
if ((static != 0)); then
  echo "make test: the static checks failed (above)" >&2
  exit "$static"
fi
