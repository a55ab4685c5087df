"""The application behind dynalloc-local-cluster.zstd (see SOURCES.md): two jobs a pause
apart, so Spark's dynamic allocation ramps up, lets executors go and asks again.

Job 0: 24 tasks of 1.5 s writing a shuffle, read by 3 tasks (a backlog that ramps up).
A 12 s pause: every executor idles out (shuffle tracking keeps the ones holding the
shuffle until its timeout, 4 s after job 0 ends). Job 1: 12 tasks of 1.5 s, no shuffle.
"""

import time

from pyspark.sql import SparkSession


def slow(x: int) -> int:
    time.sleep(1.5)
    return x


spark = SparkSession.builder.appName("dynalloc-local-cluster").getOrCreate()
sc = spark.sparkContext
pairs = sc.parallelize(range(24), 24).map(slow).map(lambda x: (x % 3, 1))
print(sorted(pairs.reduceByKey(lambda a, b: a + b, 3).collect()))
time.sleep(12)
print(sc.parallelize(range(12), 12).map(slow).count())
spark.stop()
