"""Web sessions from a click log (PySpark RDD API, Python functions).

spark-submit sessions.py INPUT_DIR OUTPUT_DIR

Reads the `events` dataset (experiments/datagen.py: CSV lines of timestamp, user, URL,
amount, user agent, status). A Python parser turns each line into (user, (time, page kind,
amount, status)); the events are grouped by user (a shuffle of pickled tuples), and each
user's events are sorted by time in Python and cut into sessions wherever 30 minutes pass
without a click. Every session is summarised (length, clicks, whether it reached checkout,
what it spent), and the summaries are aggregated per day and entry page (a second, small
shuffle) and written as text. Nearly all the work is in the Python workers: parsing,
pickling and the per-user sort and scan.
"""

import sys
from datetime import UTC, datetime
from operator import add

from pyspark.sql import SparkSession

GAP_S = 30 * 60


def parse(line: str) -> tuple[int, tuple[float, str, float, int]] | None:
    """(user, (epoch seconds, page kind, amount, status)), or None for the header."""
    if line.startswith("ts,"):
        return None
    stamp, user, rest = line.split(",", 2)
    url, amount, rest = rest.split('","', 2)
    status = int(rest.rsplit(",", 1)[1])
    when = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    path = url.strip('"').split("?", 1)[0]
    kind = path.split("/")[1] or "home"
    digits = "".join(ch for ch in amount if ch.isdigit() or ch == ".")
    return int(user), (when.timestamp(), kind, float(digits or 0.0), status)


Session = tuple[tuple[str, str], tuple[int, int, int, int, int, int]]
"""((day, entry page), (1, clicks, seconds, reached checkout, cents spent, server errors))."""


def sessions(events: list[tuple[float, str, float, int]]) -> list[Session]:
    """A user's clicks, sorted by time and cut wherever GAP_S passes without one; a summary
    per session."""
    out: list[Session] = []
    current: list[tuple[float, str, float, int]] = []
    for event in sorted(events):
        if current and event[0] - current[-1][0] > GAP_S:
            out.append(summary(current))
            current = []
        current.append(event)
    if current:
        out.append(summary(current))
    return out


def summary(clicks: list[tuple[float, str, float, int]]) -> Session:
    start, entry = clicks[0][0], clicks[0][1]
    day = datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%d")
    reached = int(any(kind == "checkout" for _, kind, _, _ in clicks))
    cents = sum(amount * 100 for _, kind, amount, _ in clicks if kind == "checkout")
    errors = sum(int(status >= 500) for *_, status in clicks)
    seconds = int(clicks[-1][0] - start)
    return (day, entry), (1, len(clicks), seconds, reached, int(cents), errors)


def main() -> None:
    source, target = sys.argv[1], sys.argv[2]
    spark = SparkSession.builder.appName("sessions").getOrCreate()
    events = spark.sparkContext.textFile(source).map(parse).filter(lambda kv: kv is not None)
    per_user = events.groupByKey().flatMap(lambda kv: sessions(list(kv[1])))
    totals = per_user.reduceByKey(lambda a, b: tuple(map(add, a, b))).sortByKey()
    totals.map(lambda kv: "\t".join(map(str, (*kv[0], *kv[1])))).saveAsTextFile(f"{target}/daily")
    count = totals.map(lambda kv: kv[1][0]).sum()
    print(f"sessions: {count}, day and entry page pairs: {totals.count()}")
    spark.stop()


if __name__ == "__main__":
    main()
