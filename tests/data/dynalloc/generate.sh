#!/usr/bin/env bash
# Regenerates dynalloc-local-cluster.zstd and driver-allocation.log with the pip pyspark
# of the project's venv (see SOURCES.md). Runs ~1-2 minutes; needs Java 17.
set -euo pipefail
export TZ=UTC  # driver-allocation.log times are read as UTC
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-$here/../../../.venv/bin/python}"
spark_home="$("$python" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
PYSPARK_PYTHON="$python" "$spark_home/bin/spark-submit" \
    --master 'local-cluster[3,1,1024]' \
    --conf spark.executor.memory=512m \
    --conf spark.dynamicAllocation.enabled=true \
    --conf spark.dynamicAllocation.shuffleTracking.enabled=true \
    --conf spark.dynamicAllocation.shuffleTracking.timeout=4s \
    --conf spark.dynamicAllocation.executorIdleTimeout=3s \
    --conf spark.dynamicAllocation.maxExecutors=3 \
    --conf spark.eventLog.enabled=true \
    --conf spark.eventLog.rolling.enabled=false \
    --conf spark.eventLog.compress=true \
    --conf spark.eventLog.compression.codec=zstd \
    --conf "spark.eventLog.dir=$work" \
    --driver-java-options "-Dlog4j2.configurationFile=file://$here/log4j2.properties" \
    "$here/job.py" 2> "$work/driver.log"
log="$(ls "$work"/*.zstd)"
cp "$log" "$here/dynalloc-local-cluster.zstd"
grep -E "ExecutorAllocationManager|ExecutorMonitor" "$work/driver.log" \
    > "$here/driver-allocation.log" || true
echo "wrote $here/dynalloc-local-cluster.zstd ($(stat -c %s "$here/dynalloc-local-cluster.zstd") bytes)"
