#!/usr/bin/env bash
# The dynamic allocation study (docs/cluster.md, "Dynamic allocation"): every spec in
# experiments/cluster/dynamic/ on a Spark standalone cluster of 8 one-core workers in network
# namespaces, each run three ways (static: 8 executors; dynamic allocation with
# maxExecutors 8; with maxExecutors 2), every run recorded (JFR + plugin on every executor,
# those dynamic allocation starts late included). Then the accuracy table through
# `perfmodel experiment report --variants`: every run predicts the other configurations
# (static ↔ dynamic, maxExecutors 2 ↔ 8) from its bundle and from its bare event log,
# slot-only replay beside them, with the mean error of the "dynamic allocation" what-if kind.
# Needs root. As scripts/cluster_study.sh: one cluster per shape, torn down after, and
# whatever an interrupted run left is torn down too.
#
#   scripts/dynalloc_study.sh [--held-out] [extra options for `perfmodel experiment run`...]
#   e.g. scripts/dynalloc_study.sh --repetitions 2
#        SPECS=experiments/cluster/dynamic/sort.toml scripts/dynalloc_study.sh --param size_mb=10
#        scripts/dynalloc_study.sh --held-out    # the accuracy figures: run once, model final
#        scripts/dynalloc_study.sh --held-out-2  # the second held-out study (components, TPC-H)
#        scripts/dynalloc_study.sh --held-out-3  # the third held-out study (ALS, TPC-DS)
#
# The specs of experiments/cluster/dynamic/ are fit workloads (sort, sql-join): their
# figures are development figures. --held-out runs experiments/cluster/dynamic-held-out/
# instead (inverted-index, a PySpark RDD job whose work is in Python, and ngrams, a wide
# DataFrame aggregation: held-out workloads of experiments/splits/default.toml), writes to
# build/experiments/dynalloc-held-out/ and labels the report by that split. Run it once,
# on a quiet machine, after the model's last change. Estimated (from a fit workload's
# timing: see the specs): about 80-95 s of application time per run on 2 executors, more
# on 8 (each executor's own start-up and JIT cost about 15 core-s at 0.25 cores), ~2 min
# per run with spark-submit and the bundle, 6 runs, 2 cluster builds, then the report's
# three readings of 6 bundles: about 15-20 minutes on this 2-core VM when quiet.
# --held-out-2 runs experiments/cluster/dynamic-held-out-2/ (connected components and TPC-H,
# held-out workloads that no dynamic allocation prediction had read and that had never run in
# this cluster shape) into build/experiments/dynalloc-held-out-2/, the same way.
# --held-out-3 runs experiments/cluster/dynamic-held-out-3/ (ALS and TPC-DS, held-out
# workloads that no dynamic allocation prediction had read and that had never run in this
# cluster shape) into build/experiments/dynalloc-held-out-3/, the same way.
#
# Eight workers share this machine's cores: each gets a CPU quota of 0.25 cores
# (PERFMODEL_CLUSTER_WORKER_CPU, 2 cores in all), so 2 and 8 executors are 0.5 and 2 cores.
# Output: build/experiments/dynalloc/report/accuracy.md, accuracy.json, plots/; runs in a
# fresh store build/experiments/dynalloc/study-<timestamp>.sqlite (or $STORE); with
# --held-out the same under build/experiments/dynalloc-held-out/ ($OUT overrides either).
set -euo pipefail
cd "$(dirname "$0")/.."

SPLIT=experiments/splits/default.toml
REPORT_ARGS=()
if [[ ${1:-} == --held-out || ${1:-} == --held-out-2 || ${1:-} == --held-out-3 ]]; then
    held_out=${1#--}
    shift
    OUT=${OUT:-build/experiments/dynalloc-$held_out}
    SPECS=${SPECS:-experiments/cluster/dynamic-$held_out/*.toml}
    REPORT_ARGS=(--split "$SPLIT")
fi
OUT=${OUT:-build/experiments/dynalloc}
SPECS=${SPECS:-experiments/cluster/dynamic/*.toml}
export PERFMODEL_CLUSTER_WORKER_CPU="${PERFMODEL_CLUSTER_WORKER_CPU:-0.25}"
STUDY="dynamic allocation"
# shellcheck source=scripts/cluster_study_lib.sh
source scripts/cluster_study_lib.sh
run_cluster_study "$@"
