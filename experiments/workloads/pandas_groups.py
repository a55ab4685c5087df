"""Grouped pandas work: per-sensor cleaning and trend fitting with ``applyInPandas``.

spark-submit pandas_groups.py READINGS_DIR OUTPUT_DIR

Each sensor's readings go, as one Arrow batch, to a Python worker running pandas and numpy:
sort by minute, a rolling median, spikes flagged by a robust z-score, a least-squares
trend; then an hourly aggregation with a scalar ``pandas_udf`` (temperature-corrected
value) and a Parquet write. The time is in the Python workers (FlatMapGroupsInPandas,
ArrowEvalPython in the plan), with Arrow serialisation between the JVM and Python.
"""

import sys

import numpy as np
import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType

CLEAN_SCHEMA = (
    "sensor int, minute int, value double, temperature double, smooth double, "
    "spike boolean, slope double"
)


def clean(readings: pd.DataFrame) -> pd.DataFrame:
    readings = readings.sort_values("minute").reset_index(drop=True)
    smooth = readings["value"].rolling(31, center=True, min_periods=1).median()
    residual = readings["value"] - smooth
    mad = float(np.median(np.abs(residual - np.median(residual)))) or 1.0
    spike = np.abs(residual) / (1.4826 * mad) > 6.0
    keep = ~spike.to_numpy()
    slope = 0.0
    if keep.sum() > 1:
        slope = float(np.polyfit(readings["minute"][keep], readings["value"][keep], 1)[0])
    return readings.assign(smooth=smooth, spike=spike, slope=slope)


@F.pandas_udf(DoubleType())
def corrected(value: pd.Series, temperature: pd.Series) -> pd.Series:
    return value - 0.8 * (temperature - 20.0)


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("pandas-groups").getOrCreate()
    readings = spark.read.parquet(source)
    cleaned = readings.groupBy("sensor").applyInPandas(clean, schema=CLEAN_SCHEMA)
    hourly = (
        cleaned.where(~F.col("spike"))
        .withColumn("corrected", corrected("smooth", "temperature"))
        .groupBy("sensor", (F.col("minute") / 60).cast("int").alias("hour"))
        .agg(
            F.avg("corrected").alias("value"),
            F.first("slope").alias("slope"),
            F.count("*").alias("readings"),
        )
    )
    hourly.write.mode("overwrite").parquet(target)
    print("hours:", spark.read.parquet(target).count())
    spark.stop()


if __name__ == "__main__":
    main()
