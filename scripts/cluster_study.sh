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

OUT=${OUT:-build/experiments/cluster}
SPECS=${SPECS:-experiments/cluster/*.toml}
STUDY=cluster
REPORT_ARGS=()
# shellcheck source=scripts/cluster_study_lib.sh
source scripts/cluster_study_lib.sh
run_cluster_study "$@"
