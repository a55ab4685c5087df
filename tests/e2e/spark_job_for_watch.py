"""A small PySpark job for `perfmodel watch` tests: several stages spread over some seconds,
each map stage skewed (one task sleeps 3 s, the others 0.02 s per record: skew by the
diagnosis' rule even when a loaded machine slows every task), writing its event log to the
directory given (argv[1]); argv[2] is "rolling" or "single"; argv[3], if given, the number
of rounds (two stages each; default 4)."""

import sys
import time

from pyspark.sql import SparkSession

log_dir, shape = sys.argv[1], sys.argv[2]
spark = (
    SparkSession.builder.master("local[2]")
    .appName("watch-e2e")
    .config("spark.eventLog.enabled", "true")
    .config("spark.eventLog.dir", f"file://{log_dir}")
    .config("spark.eventLog.rolling.enabled", "true" if shape == "rolling" else "false")
    .config("spark.eventLog.rolling.maxFileSize", "10m")
    .config("spark.eventLog.compress", "true")
    .config("spark.eventLog.compression.codec", "zstd")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "4")
    .getOrCreate()
)
sc = spark.sparkContext


def slow(x: int) -> int:
    time.sleep(3.0 if x == 0 else 0.02)
    return x


for _ in range(int(sys.argv[3]) if len(sys.argv) > 3 else 4):
    rdd = sc.parallelize(range(40), 4).map(slow).map(lambda x: (x % 3, x))
    rdd.reduceByKey(lambda a, b: a + b).collect()
    time.sleep(0.5)
spark.stop()
