#!/usr/bin/env bash
# The held-out bandwidth study (docs/cluster.md, "The held-out bandwidth study"; issue 40,
# part 5): every spec in experiments/cluster/bandwidth-held-out/ (TPC-DS, TPC-H and ALS, none
# of which had run on the cluster before) on a Spark standalone cluster of two one-core
# workers in network namespaces, their links shaped to 100 and then 1000 Mbit/s, every run
# recorded (the plugin's sampler on every executor). Then the accuracy table through
# `perfmodel experiment report --variants`: each run predicts the other link speed from its
# bundle and from its bare event log, slot-only replay beside them. Needs root. As
# scripts/cluster_study.sh: one cluster per shape, torn down after, and whatever an
# interrupted run left is torn down too.
#
#   scripts/bandwidth_study.sh [--second|--third] [extra options for `perfmodel experiment run`...]
#   e.g. SPECS=experiments/cluster/bandwidth-held-out/als.toml scripts/bandwidth_study.sh
#
# --second runs the second held-out study instead (experiments/cluster/bandwidth-held-out-2/:
# components, ngrams and an inverted index, read once after the link's remote-bytes law),
# into build/experiments/bandwidth-held-out-2. --third runs the third
# (experiments/cluster/bandwidth-held-out-3/: the wide shuffle, window functions and pandas
# groups, with links at 20 and 200 Mbit/s so that the link moves the runs by much), into
# build/experiments/bandwidth-held-out-3.
#
# Each worker gets a CPU quota of one core (PERFMODEL_CLUSTER_WORKER_CPU), so the two
# executors ask the 2-core machine for all of it. Run it on a quiet machine: about 15 min.
# Output: build/experiments/bandwidth-held-out/report/accuracy.md, accuracy.json, plots/;
# runs in a fresh store build/experiments/bandwidth-held-out/study-<timestamp>.sqlite (or
# $STORE).
set -euo pipefail
cd "$(dirname "$0")/.."

STUDY_DIR=bandwidth-held-out
if [[ ${1:-} == --second ]]; then
    shift
    STUDY_DIR=bandwidth-held-out-2
elif [[ ${1:-} == --third ]]; then
    shift
    STUDY_DIR=bandwidth-held-out-3
fi
OUT=${OUT:-build/experiments/$STUDY_DIR}
SPECS=${SPECS:-experiments/cluster/$STUDY_DIR/*.toml}
export PERFMODEL_CLUSTER_WORKER_CPU="${PERFMODEL_CLUSTER_WORKER_CPU:-1}"
STUDY=bandwidth
REPORT_ARGS=(--split experiments/splits/default.toml)
# shellcheck source=scripts/cluster_study_lib.sh
source scripts/cluster_study_lib.sh
run_cluster_study "$@"
