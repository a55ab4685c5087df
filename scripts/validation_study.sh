#!/usr/bin/env bash
# The validation study: run every spec in experiments/ (each workload under local[1]/local[2]
# × a spilling and an ample heap), then write the accuracy table (measured vs predicted for
# every baseline run → other configuration, with the slot-only replay beside it).
#
#   scripts/validation_study.sh [extra options for `perfmodel experiment run`...]
#   e.g. scripts/validation_study.sh --repetitions 3
#
# Output: build/experiments/report/accuracy.md, accuracy.json and plots/*.png|svg; the runs
# go to a fresh store build/experiments/study-<timestamp>.sqlite (or $STORE) (browse it with
# `perfmodel runs list --store ...`), bundles to build/experiments/bundles/<store name>/.
# Data is generated (seeded, deterministic) into build/experiments/data on first use.
set -euo pipefail
cd "$(dirname "$0")/.."

PERFMODEL=${PERFMODEL:-.venv/bin/perfmodel}
OUT=${OUT:-build/experiments}
SPECS=${SPECS:-experiments/*.toml}
mkdir -p "$OUT"
# STORE=path adds the runs to an existing study store (more repetitions: the report averages
# every measured run of the same experiment and parameters).
STORE=${STORE:-"$OUT/study-$(date +%Y%m%d-%H%M%S).sqlite"}
BUNDLES="$OUT/bundles/$(basename "$STORE" .sqlite)"
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$(pwd)/.venv/bin/python}"
export SPARK_LOCAL_IP=127.0.0.1

echo "study store: $STORE (load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime))"
for spec in $SPECS; do
    echo "== $spec"
    # A failed run is stored as failed and left out of the table; the study goes on.
    $PERFMODEL experiment run "$spec" --store "$STORE" --bundles "$BUNDLES" "$@" \
        || echo "   (some runs of $spec failed: see \`perfmodel runs list --store $STORE\`)"
done
# shellcheck disable=SC2086
$PERFMODEL experiment report $SPECS --store "$STORE" --out "$OUT/report" > /dev/null
ln -sf "$(basename "$STORE")" "$OUT/study-latest.sqlite"
echo "wrote $OUT/report/accuracy.md, accuracy.json and plots/"
cat "$OUT/report/accuracy.md"
