#!/usr/bin/env bash
# The validation study: run the specs in experiments/ (each workload under local[1]/local[2]
# × a spilling and an ample heap), then write the accuracy table (measured vs predicted for
# every baseline run → other configuration, with the slot-only replay beside it), each
# workload labelled fit or held-out by the split (experiments/splits/default.toml).
#
#   scripts/validation_study.sh [--held-out] [--smoke] [extra options for `perfmodel experiment run`...]
#   e.g. scripts/validation_study.sh --repetitions 3
#        scripts/validation_study.sh --held-out          # only the held-out workloads
#        scripts/validation_study.sh --held-out --smoke  # the same at tiny sizes, 2 configs:
#                                                        # checks the pipeline, not the model
#
# Every pair is predicted three ways — from the baseline's bare event log, from its bundle,
# and from the bundle without code vectors — beside the slot-only replay; the held-out
# table gives each one's mean error, the worst pair and interval coverage.
#
# Output: build/experiments/report/accuracy.md, accuracy.json and plots/*.png|svg; the runs
# go to a fresh store build/experiments/study-<timestamp>.sqlite (or $STORE) (browse it with
# `perfmodel runs list --store ...`), bundles to build/experiments/bundles/<store name>/.
# Data is generated (seeded, deterministic) into build/experiments/data on first use.
# SPECS="a.toml b.toml" runs those specs instead; SPLIT=path uses another split file.
set -euo pipefail
cd "$(dirname "$0")/.."

PERFMODEL=${PERFMODEL:-.venv/bin/perfmodel}
PYTHON=${PYTHON:-.venv/bin/python}
OUT=${OUT:-build/experiments}
SPLIT=${SPLIT:-experiments/splits/default.toml}
HELD_OUT=0
SMOKE=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --held-out) HELD_OUT=1; shift ;;
        --smoke) SMOKE=1; shift ;;
        *) break ;;
    esac
done
if [[ -z "${SPECS:-}" ]]; then
    SPECS="$(echo experiments/*.toml)"
    if [[ $HELD_OUT == 1 ]]; then
        # shellcheck disable=SC2086
        SPECS="$($PYTHON -m perfmodel.experiment.split "$SPLIT" --role held-out $SPECS | tr '\n' ' ')"
    fi
fi
mkdir -p "$OUT"
# STORE=path adds the runs to an existing study store (more repetitions: the report averages
# every measured run of the same experiment and parameters).
STORE=${STORE:-"$OUT/study-$(date +%Y%m%d-%H%M%S).sqlite"}
BUNDLES="$OUT/bundles/$(basename "$STORE" .sqlite)"
REPORT="$OUT/report"
if [[ $SMOKE == 1 ]]; then
    REPORT="$OUT/report-smoke"
fi
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$(pwd)/.venv/bin/python}"
export SPARK_LOCAL_IP=127.0.0.1

# --smoke: the smallest inputs that still run every stage, and only the two 2g configs;
# one argument per line (config names hold spaces).
smoke_options() {
    local spec=$1 params=""
    case "$(basename "$spec" .toml)" in
        tpch) params="sf=0.01 queries=1,3,6" ;;
        ml_pipeline) params="size_mb=4 iterations=3" ;;
        als) params="size_mb=2 iterations=2" ;;
        pagerank) params="size_mb=2 iterations=2" ;;
        window | pandas_groups | wordcount | udf_etl | ngrams | inverted_index) params="size_mb=4" ;;
        sort | sql_join) params="size_mb=8" ;;
    esac
    for p in $params; do printf -- '--param\n%s\n' "$p"; done
    $PYTHON -c 'import sys
from perfmodel.experiment.spec import load_spec
for config in load_spec(sys.argv[1]).configs:
    if "driver=2g" in config.name:
        print("--only", config.name, sep="\n")' "$spec"
}

echo "study store: $STORE (load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime))"
started=$(date +%s)
for spec in $SPECS; do
    echo "== $spec"
    extra=()
    if [[ $SMOKE == 1 ]]; then
        mapfile -t extra < <(smoke_options "$spec")
    fi
    # A failed run is stored as failed and left out of the table; the study goes on.
    $PERFMODEL experiment run "$spec" --store "$STORE" --bundles "$BUNDLES" "${extra[@]}" "$@" \
        || echo "   (some runs of $spec failed: see \`perfmodel runs list --store $STORE\`)"
done
echo "runs took $(( $(date +%s) - started )) s; predicting every pair (bare log, bundle, no code vectors, slot-only)"
# shellcheck disable=SC2086
$PERFMODEL experiment report $SPECS --store "$STORE" --out "$REPORT" --split "$SPLIT" \
    --variants > /dev/null
if [[ $SMOKE == 0 ]]; then
    ln -sf "$(basename "$STORE")" "$OUT/study-latest.sqlite"
fi
echo "study took $(( $(date +%s) - started )) s; wrote $REPORT/accuracy.md, accuracy.json and plots/"
cat "$REPORT/accuracy.md"
