"""Wide shuffle: 100-byte records hashed into many buckets and moved to their bucket's reduce
partition, then aggregated per bucket there and written as Parquet.

Every map task writes a block for every reduce task (a many-to-many hash exchange of the
whole input, no map-side combining: the repartition comes before the aggregation), so with
many partitions the shuffle is many small blocks fetched from every executor by every
executor. The aggregation reuses the repartition's hash partitioning: one exchange only.

spark-submit wide_shuffle.py INPUT_DIR PARTITIONS BUCKETS OUTPUT_DIR

PARTITIONS is the repartition's count, fixed whatever the settings (the scale-out study's
64), or ``conf``: repartition by the bucket alone, so the count is
spark.sql.shuffle.partitions and adaptive execution may coalesce it (the settings study).
"""

import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def main() -> None:
    source, partitions, buckets, target = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    spark = SparkSession.builder.appName("wide-shuffle").getOrCreate()
    records = spark.read.csv(source, schema="key STRING, payload STRING")
    bucketed = records.withColumn("bucket", F.pmod(F.xxhash64("key"), F.lit(buckets)))
    if partitions == "conf":
        moved = bucketed.repartition("bucket")
    else:
        moved = bucketed.repartition(int(partitions), "bucket")
    per_bucket = moved.groupBy("bucket").agg(
        F.count("*").alias("records"),
        F.sum(F.length("payload")).alias("payload_bytes"),
        F.min("key").alias("first_key"),
        F.max("payload").alias("last_payload"),
    )
    per_bucket.write.mode("overwrite").parquet(target)
    print("buckets written:", spark.read.parquet(target).count())
    spark.stop()


if __name__ == "__main__":
    main()
