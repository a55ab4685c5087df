#!/usr/bin/env bash
# The scale-out study (docs/cluster.md, "The scale-out study"; issue 40): every spec in
# experiments/cluster/scaleout/ (held-out workloads: window, pandas-groups and a wide
# shuffle) on Spark standalone clusters of 2, 4 and 8 one-core workers in network
# namespaces, one executor per worker, every run recorded (the plugin's sampler on every
# executor). Then the accuracy table through `perfmodel experiment report --variants`:
# every run predicts the other executor counts from its bundle and from its bare event log,
# slot-only replay beside them, and the worker-count pairs by scale factor and direction
# (4× out: 2 → 8; 4× in: 8 → 2; 2× out: 2 → 4, 4 → 8; 2× in: 8 → 4, 4 → 2) and by step.
# Needs root. As scripts/cluster_study.sh: one cluster per shape, torn down after, and
# whatever an interrupted run left is torn down too.
#
#   scripts/scaleout_study.sh [--fit] [extra options for `perfmodel experiment run`...]
#   e.g. scripts/scaleout_study.sh --repetitions 2
#        SPECS=experiments/cluster/scaleout/window.toml scripts/scaleout_study.sh
#
# --fit runs four fit workloads of the split instead (experiments/cluster/scaleout-fit/:
# PageRank, sort, SQL join, UDF ETL, at small sizes, on 2 and 8 workers), into
# build/experiments/scaleout-fit: the cluster runs the prediction intervals are calibrated
# on (`perfmodel experiment calibrate --store`, docs/cluster.md "Intervals on the cluster");
# no accuracy figure is read from them.
#
# Each worker gets a CPU quota of 0.25 cores (PERFMODEL_CLUSTER_WORKER_CPU), so 2, 4 and 8
# executors are 0.5, 1 and 2 cores: the 8-worker cluster asks the 2-core machine for all of
# it, as a packed node would. Run it on a quiet machine. Estimated 15-20 min, 25 at most
# (docs/cluster.md).
# Output: build/experiments/scaleout/report/accuracy.md, accuracy.json, plots/; runs in a
# fresh store build/experiments/scaleout/study-<timestamp>.sqlite (or $STORE).
# PERFMODEL_STUDY_CLUSTER / PERFMODEL_STUDY_SUBNET name another cluster (default pms,
# 10.77.2), so the study does not take down a cluster of that name someone else is using.
set -euo pipefail
cd "$(dirname "$0")/.."

STUDY_DIR=scaleout
if [[ ${1:-} == --fit ]]; then
    shift
    STUDY_DIR=scaleout-fit
fi
OUT=${OUT:-build/experiments/$STUDY_DIR}
SPECS=${SPECS:-experiments/cluster/$STUDY_DIR/*.toml}
export PERFMODEL_CLUSTER_WORKER_CPU="${PERFMODEL_CLUSTER_WORKER_CPU:-0.25}"
STUDY=scale-out
REPORT_ARGS=(--split experiments/splits/default.toml)
# shellcheck source=scripts/cluster_study_lib.sh
source scripts/cluster_study_lib.sh
run_cluster_study "$@"
