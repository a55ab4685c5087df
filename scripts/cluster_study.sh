#!/usr/bin/env bash
# The cluster study (docs/cluster.md): every spec in experiments/cluster/ (sort, join,
# repartition of ~1 GB) on a Spark standalone cluster in network namespaces, under 2 link
# rates × 2 executor heaps × 2 and 3 workers, each run recorded (JFR + plugin on every
# executor); then the accuracy table (measured vs predicted, slot-only replay beside it).
# Needs root. The runner builds one cluster per shape and tears it down after.
#
#   scripts/cluster_study.sh [extra options for `perfmodel experiment run`...]
#   e.g. scripts/cluster_study.sh --param size_mb=200 --only 'cluster workers=2 ...'
#
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
# A cluster an interrupted study left behind (the runner's is named pms).
trap '"$PERFMODEL" cluster down --name pms > /dev/null 2>&1 || true' EXIT

echo "cluster study store: $STORE (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
for spec in $SPECS; do
    echo "== $spec"
    $PERFMODEL experiment run "$spec" --store "$STORE" --bundles "$BUNDLES" "$@" \
        || echo "   (some runs of $spec failed: see \`perfmodel runs list --store $STORE\`)"
done
# shellcheck disable=SC2086
$PERFMODEL experiment report $SPECS --store "$STORE" --out "$OUT/report" > /dev/null
ln -sf "$(basename "$STORE")" "$OUT/study-latest.sqlite"
echo "wrote $OUT/report/accuracy.md, accuracy.json and plots/"
cat "$OUT/report/accuracy.md"
