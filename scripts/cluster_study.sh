#!/usr/bin/env bash
# The cluster study (docs/cluster.md): every spec in experiments/cluster/ (sort, join,
# repartition of ~1 GB) on a Spark standalone cluster in network namespaces. Each spec runs a
# base configuration (2 workers, 100 Mbit/s links, 512m executor heaps) and three others that
# each change one resource (1000 Mbit/s links; 2g heaps; 3 workers), every run recorded (JFR +
# plugin on every executor); then the accuracy table through `perfmodel experiment report
# --variants`: measured against predicted from each run's bundle and from its bare event log,
# slot-only replay beside it, and the mean error per what-if kind (network bandwidth, memory,
# worker count). Needs root. The runner builds one cluster per shape and tears it down after;
# this script also tears down whatever an interrupted run left, and says how long it took.
#
#   scripts/cluster_study.sh [extra options for `perfmodel experiment run`...]
#   e.g. scripts/cluster_study.sh --param size_mb=200
#        SPECS=experiments/cluster/sort.toml scripts/cluster_study.sh --repetitions 2
#
# Takes ~35-40 min on the 2-core VM it was built on, quiet (docs/cluster.md).
# Output: build/experiments/cluster/report/accuracy.md, accuracy.json, plots/; runs in a fresh
# store build/experiments/cluster/study-<timestamp>.sqlite (or $STORE), bundles beside it.
set -euo pipefail
cd "$(dirname "$0")/.."

PERFMODEL=${PERFMODEL:-.venv/bin/perfmodel}
OUT=${OUT:-build/experiments/cluster}
SPECS=${SPECS:-experiments/cluster/*.toml}
mkdir -p "$OUT"
STORE=${STORE:-"$OUT/study-$(date +%Y%m%d-%H%M%S).sqlite"}
BUNDLES="$OUT/bundles/$(basename "$STORE" .sqlite)"
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$(pwd)/.venv/bin/python}"
STARTED=$(date +%s)

finish() {
    local status=$?
    # A cluster an interrupted or failed study left behind (the runner's is named pms).
    "$PERFMODEL" cluster down --name pms > /dev/null 2>&1 || true
    local took=$(($(date +%s) - STARTED))
    printf 'cluster study %s after %dm%02ds (load average now: %s)\n' \
        "$([ "$status" -eq 0 ] && echo finished || echo "FAILED (exit $status)")" \
        $((took / 60)) $((took % 60)) "$(cut -d' ' -f1-3 /proc/loadavg)" >&2
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "cluster study store: $STORE (started $(date -u +%H:%M:%S) UTC," \
    "load average: $(cut -d' ' -f1-3 /proc/loadavg))"
for spec in $SPECS; do
    echo "== $spec ($(date -u +%H:%M:%S) UTC)"
    $PERFMODEL experiment run "$spec" --store "$STORE" --bundles "$BUNDLES" "$@" \
        || echo "   (some runs of $spec failed: see \`$PERFMODEL runs list --store $STORE\`)"
done
echo "== report ($(date -u +%H:%M:%S) UTC)"
# shellcheck disable=SC2086
$PERFMODEL experiment report $SPECS --store "$STORE" --out "$OUT/report" --variants > /dev/null
ln -sf "$(basename "$STORE")" "$OUT/study-latest.sqlite"
echo "wrote $OUT/report/accuracy.md, accuracy.json and plots/"
cat "$OUT/report/accuracy.md"
