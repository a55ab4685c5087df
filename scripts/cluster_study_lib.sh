# Sourced by the cluster studies (cluster_study.sh, dynalloc_study.sh, scaleout_study.sh,
# bandwidth_study.sh): what every one of them does around its specs. The study sets STUDY (its name in messages),
# OUT, SPECS and REPORT_ARGS (further options of `experiment report`, possibly none), then
# calls `run_cluster_study "$@"` with the options for `perfmodel experiment run`.
#
# Runs go into a fresh store $OUT/study-<timestamp>.sqlite (or $STORE), bundles beside it;
# the report into $OUT/report. A cluster an interrupted or failed study left behind is torn
# down on exit: the runner's, named pms unless PERFMODEL_STUDY_CLUSTER names another (as
# perfmodel/experiment/cluster_runs.py reads it). The time taken and the load are printed.

PERFMODEL=${PERFMODEL:-.venv/bin/perfmodel}
export PYSPARK_PYTHON="${PYSPARK_PYTHON:-$(pwd)/.venv/bin/python}"

_load_average() {
    cut -d' ' -f1-3 /proc/loadavg
}

_finish_cluster_study() {
    local status=$?
    "$PERFMODEL" cluster down --name "${PERFMODEL_STUDY_CLUSTER:-pms}" > /dev/null 2>&1 || true
    local took=$(($(date +%s) - STARTED))
    printf '%s study %s after %dm%02ds (load average now: %s)\n' "$STUDY" \
        "$([ "$status" -eq 0 ] && echo finished || echo "FAILED (exit $status)")" \
        $((took / 60)) $((took % 60)) "$(_load_average)" >&2
}

run_cluster_study() {
    mkdir -p "$OUT"
    STORE=${STORE:-"$OUT/study-$(date +%Y%m%d-%H%M%S).sqlite"}
    BUNDLES="$OUT/bundles/$(basename "$STORE" .sqlite)"
    STARTED=$(date +%s)
    trap _finish_cluster_study EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    local cpu=""
    if [[ -n ${PERFMODEL_CLUSTER_WORKER_CPU:-} ]]; then
        cpu="worker CPU $PERFMODEL_CLUSTER_WORKER_CPU, "
    fi
    echo "$STUDY study store: $STORE (started $(date -u +%H:%M:%S) UTC," \
        "${cpu}load average: $(_load_average))"
    local spec
    for spec in $SPECS; do
        echo "== $spec ($(date -u +%H:%M:%S) UTC, load average: $(_load_average))"
        $PERFMODEL experiment run "$spec" --store "$STORE" --bundles "$BUNDLES" "$@" \
            || echo "   (some runs of $spec failed: see \`$PERFMODEL runs list --store $STORE\`)"
    done
    echo "== report ($(date -u +%H:%M:%S) UTC)"
    # shellcheck disable=SC2086
    $PERFMODEL experiment report $SPECS --store "$STORE" --out "$OUT/report" --variants \
        ${REPORT_ARGS[@]+"${REPORT_ARGS[@]}"} > /dev/null
    ln -sf "$(basename "$STORE")" "$OUT/study-latest.sqlite"
    echo "wrote $OUT/report/accuracy.md, accuracy.json and plots/"
    cat "$OUT/report/accuracy.md"
}
