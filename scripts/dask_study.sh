#!/usr/bin/env bash
# The Dask what-if study (docs/dask.md): three workloads (experiments/dask/workloads/) under
# LocalCluster with 1 or 2 workers × 1 or 2 threads × two memory limits per worker, each run
# recorded with `perfmodel record`, every run predicting every other configuration, beside a
# slot-only replay of the same task stream.
#
#   scripts/dask_study.sh [OUT] [extra options for experiments/dask/study.py...]
#   e.g. scripts/dask_study.sh build/dask-study
#        scripts/dask_study.sh /tmp/smoke --scale 0.05 --configs 2   # checks the pipeline only
#
# The machine has 2 cores shared with others: the study first waits (up to WAIT_S, default
# 1800 s; WAIT_S=0 does not wait) for the 1-minute load average to fall below MAX_LOAD (1.5),
# and runs at the default priority (nice 0); each run's load average before and after is
# kept in OUT/study.md and OUT/study.json, so figures from a busy machine say so.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-build/dask-study}
shift || true
PYTHON=${PYTHON:-.venv/bin/python}
MAX_LOAD=${MAX_LOAD:-1.5}
WAIT_S=${WAIT_S:-1800}
waited=0
while awk -v max="$MAX_LOAD" '{exit !($1 >= max)}' /proc/loadavg && (( waited < WAIT_S )); do
    sleep 30
    waited=$((waited + 30))
done
echo "dask study: load $(cut -d' ' -f1-3 /proc/loadavg) after waiting ${waited} s" >&2
exec "$PYTHON" experiments/dask/study.py --out "$OUT" "$@"
