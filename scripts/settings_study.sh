#!/usr/bin/env bash
# The settings study: run the specs in experiments/settings/ (each workload on local[2] with a
# 2g heap under Spark settings: shuffle partitions from 1 to 2000 with AQE on and off,
# broadcast joins off, smaller and larger file splits; RDD workloads under the default
# parallelism from 2 to 1000), then predict every run from every other run's bare event log
# and write the table: mean error, the error of "no change" (the source run's own runtime),
# and both on the pairs whose measured effect is at least 15%.
#
#   scripts/settings_study.sh [--held-out | --fit] [--smoke] [--configs 'A;B;...'] [--param K=V]
#                             [extra options for `perfmodel experiment run`...]
#   e.g. scripts/settings_study.sh --held-out          # the study: held-out workloads + TPC-H
#        scripts/settings_study.sh --held-out --configs 'partitions=1 aqe=off;partitions=64 aqe=on'
#                                                      # only these configs of each spec that has
#                                                      # them (a spec with none runs all of its own)
#        scripts/settings_study.sh --fit --smoke       # the fit workloads at tiny sizes and a
#                                                      # few configs: checks the pipeline only
#
# Output: build/experiments/settings-report/settings.md and settings.json (settings-smoke
# with --smoke); runs go to a fresh store build/experiments/settings-<timestamp>.sqlite (or
# $STORE). The specs are written by scripts/make_settings_specs.py.
set -euo pipefail
cd "$(dirname "$0")/.."

PERFMODEL=${PERFMODEL:-.venv/bin/perfmodel}
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-build/experiments}
SPLIT=${SPLIT:-experiments/splits/default.toml}
ROLE=""
SMOKE=0
CONFIGS=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --held-out) ROLE=held-out; shift ;;
        --fit) ROLE=fit; shift ;;
        --smoke) SMOKE=1; shift ;;
        --configs) CONFIGS=$2; shift 2 ;;
        *) break ;;
    esac
done
if [[ -z "${SPECS:-}" ]]; then
    SPECS="$(echo experiments/settings/*.toml)"
    if [[ -n $ROLE ]]; then
        # shellcheck disable=SC2086
        SPECS="$($PYTHON -m perfmodel.experiment.split "$SPLIT" --role "$ROLE" $SPECS | tr '\n' ' ')"
    fi
fi
mkdir -p "$OUT"
STORE=${STORE:-"$OUT/settings-$(date +%Y%m%d-%H%M%S).sqlite"}
BUNDLES="$OUT/bundles/$(basename "$STORE" .sqlite)"
REPORT="$OUT/settings-report"
LIMIT=()
if [[ $SMOKE == 1 ]]; then
    REPORT="$OUT/settings-smoke"
fi
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$(pwd)/.venv/bin/python}"
export SPARK_LOCAL_IP=127.0.0.1

# `--only` for each config of SPEC named in the ';'-separated list NAMES; nothing when the spec
# has none of them (it then runs all of its configs).
only_options() {
    $PYTHON -c 'import sys
from perfmodel.experiment.spec import load_spec
keep = set(sys.argv[2].split(";"))
for config in load_spec(sys.argv[1]).configs:
    if config.name in keep:
        print("--only", config.name, sep="\n")' "$1" "$2"
}

# --smoke: the smallest inputs that still run every stage, and a few configs spanning the
# settings (too few and too many partitions, AQE on and off, broadcast off, small splits).
smoke_options() {
    local spec=$1 params=""
    case "$(basename "$spec" .toml)" in
        tpch) params="sf=0.01 queries=1,3,6" ;;
        tpcds) params="sf=0.01 queries=7,40,78" ;;
        wide_shuffle) params="size_mb=4 buckets=1000" ;;
        ml_pipeline) params="size_mb=4 iterations=3" ;;
        als) params="size_mb=2 iterations=2" ;;
        pagerank) params="size_mb=2 iterations=2" ;;
        window | pandas_groups | wordcount | udf_etl | ngrams | inverted_index) params="size_mb=4" ;;
        sort | sql_join) params="size_mb=8" ;;
    esac
    for p in $params; do printf -- '--param\n%s\n' "$p"; done
    only_options "$spec" "partitions=1 aqe=off;partitions=64 aqe=on;partitions=400 aqe=off;partitions=64 no-broadcast;partitions=64 splits=4m;parallelism=2;parallelism=32;parallelism=200"
}

echo "settings study store: $STORE (load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime))"
started=$(date +%s)
for spec in $SPECS; do
    echo "== $spec"
    extra=()
    if [[ $SMOKE == 1 ]]; then
        mapfile -t extra < <(smoke_options "$spec")
    elif [[ -n $CONFIGS ]]; then
        mapfile -t extra < <(only_options "$spec" "$CONFIGS")
    fi
    # A failed run is stored as failed and left out of the table; the study goes on.
    $PERFMODEL experiment run "$spec" --store "$STORE" --bundles "$BUNDLES" "${extra[@]}" "$@" \
        || echo "   (some runs of $spec failed: see \`perfmodel runs list --store $STORE\`)"
done
echo "runs took $(( $(date +%s) - started )) s; predicting every pair from bare event logs"
# shellcheck disable=SC2086
$PERFMODEL experiment settings $SPECS --store "$STORE" --split "$SPLIT" --out "$REPORT" \
    "${LIMIT[@]}" > /dev/null
echo "study took $(( $(date +%s) - started )) s; wrote $REPORT/settings.md and settings.json"
cat "$REPORT/settings.md"
