#!/usr/bin/env bash
# The shaped Spark standalone cluster on this machine (docs/cluster.md): a thin wrapper over
# `perfmodel cluster`, which does the work and cleans up after any failure.
#
#   scripts/cluster.sh up [--workers 2|3] [--rate MBIT] [--cpu CORES] [--disk MBPS] [--name N]
#   scripts/cluster.sh status [--name N]
#   scripts/cluster.sh record -o BUNDLE -- spark-submit app.py     # driver in the master's namespace
#   scripts/cluster.sh down [--name N]                               # idempotent
#
# Needs root (network namespaces, tc, cgroups).
set -euo pipefail
cd "$(dirname "$0")/.."
PERFMODEL=${PERFMODEL:-.venv/bin/perfmodel}
case "${1:-}" in
    up|down|status|exec|record) exec "$PERFMODEL" cluster "$@" ;;
    *) echo "usage: $0 up|down|status|exec|record [options] (see: $PERFMODEL cluster --help)" >&2
       exit 2 ;;
esac
