"""ETL with Python UDFs: parse messy web-shop events, normalise, aggregate, write Parquet.

spark-submit udf_etl.py INPUT_DIR OUTPUT_DIR
"""

import re
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, StringType

RATES = {"USD": 1.0, "EUR": 1.08, "GBP": 1.27}
AMOUNT = re.compile(r"([A-Z]{3})?\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Z]{3})?")


@F.udf(DoubleType())
def amount_usd(text):
    m = AMOUNT.fullmatch(text or "")
    if m is None:
        return None
    currency = m.group(1) or m.group(3) or "USD"
    return float(m.group(2)) * RATES.get(currency, 1.0)


@F.udf(StringType())
def browser(agent):
    agent = agent or ""
    if "bot" in agent.lower():
        return "bot"
    for name in ("Firefox", "Chrome", "Safari", "curl"):
        if name in agent:
            return name.lower()
    return "other"


@F.udf(StringType())
def page_kind(url):
    path = (url or "/").split("?")[0].rstrip("/") or "/"
    return re.sub(r"/[0-9]+$", "/:id", path)


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("udf-etl").getOrCreate()
    events = spark.read.csv(source, header=True, inferSchema=False)
    clean = (
        events.withColumn("usd", amount_usd("amount"))
        .withColumn("browser", browser("user_agent"))
        .withColumn("page", page_kind("url"))
        .withColumn("day", F.to_date("ts"))
        .where((F.col("status") == "200") & (F.col("browser") != "bot"))
    )
    daily = clean.groupBy("day", "browser", "page").agg(
        F.sum("usd").alias("revenue"), F.countDistinct("user_id").alias("users")
    )
    daily.write.mode("overwrite").parquet(target)
    print("rows:", spark.read.parquet(target).count())
    spark.stop()


if __name__ == "__main__":
    main()
