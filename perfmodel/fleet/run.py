"""One fleet run end to end: discover, skip what is done, analyse the rest, merge, summarise.

Both engines feed the same merge, so the tables on disk do not depend on which one ran:
the rows of every log analysed now replace that log's earlier rows, rows of logs not seen
this time are kept (a ``--since`` run does not forget older logs; ``--fresh`` starts over),
and regressions and the summary are recomputed from the merged tables every time. The run
computes; `perfmodel.report` renders its summary (``perfmodel fleet`` writes
``summary.html`` beside the tables).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from perfmodel.atomic import check_output_dir
from perfmodel.errors import PerfmodelError
from perfmodel.extras import require_extra
from perfmodel.fleet.analyse import Rows
from perfmodel.fleet.discover import LogRef, Unusable, discover
from perfmodel.fleet.local import Interrupted, run_local
from perfmodel.fleet.regress import find_regressions
from perfmodel.fleet.remote import history_refs, list_store_refs
from perfmodel.fleet.schema import MANIFEST, RESULT_TABLES, Table, concat, table_from_rows
from perfmodel.fleet.store import (
    manifest_entries,
    read_table,
    replace_logs,
    unchanged,
    write_table,
)
from perfmodel.fleet.summary import FleetSummary, mark_duplicates, summarise
from perfmodel.profile.sources.stores import SourceOptions
from perfmodel.simulate.whatif import Change

ENGINES = ("local", "spark")


class FleetOptionError(PerfmodelError):
    """A fleet option that cannot work (unknown engine, a History Server on the Spark
    engine)."""


class FleetInterrupted(KeyboardInterrupt):
    """Ctrl-C during a local fleet run, after the ``saved`` logs of ``total`` finished by
    then were written to ``out`` as a finished run writes them: the same command resumes."""

    def __init__(self, saved: int, total: int, out: Path) -> None:
        super().__init__()
        self.saved, self.total, self.out = saved, total, out


@dataclass(slots=True)
class FleetOptions:
    inputs: list[str]
    out: Path
    engine: str = "local"
    since: datetime | None = None
    scenarios: list[Change] = field(default_factory=list)
    jobs: int | None = None
    memory_cap_bytes: int | None = None
    fresh: bool = False
    master: str | None = None
    spark_conf: list[tuple[str, str]] = field(default_factory=list)
    staging: str | None = None
    transfer: str = "auto"
    history_server: str | None = None
    """A Spark History Server whose applications are analysed (beside ``inputs``)."""
    sources: SourceOptions = field(default_factory=SourceOptions)
    """How remote logs are reached (S3 endpoint, CA bundle, timeouts)."""


@dataclass(slots=True)
class FleetResult:
    tables: dict[str, Table]
    analysed: list[LogRef]
    skipped: int
    summary: FleetSummary


def run_fleet(
    opts: FleetOptions,
    *,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[LogRef], None] | None = None,
) -> FleetResult:
    """Analyse the logs that changed, merge, write the tables and summarise them."""
    if opts.engine not in ENGINES:
        raise FleetOptionError(f"--engine must be one of {', '.join(ENGINES)}")
    out = check_output_dir(opts.out.expanduser()).resolve()
    refs, remote, unusable = discover(opts.inputs, since=opts.since, exclude=out)
    if opts.engine != "spark":
        # The local engine reads object stores, HDFS and History Servers itself.
        refs = sorted({*refs, *list_store_refs(remote, opts.sources, opts.since)})
        remote = []
        if opts.history_server is not None:
            found = history_refs(opts.history_server, opts.sources, opts.since)
            refs = sorted({*refs, *found})
    elif opts.history_server is not None:
        raise FleetOptionError("--history-server works with the local engine (--engine local)")
    spark = None
    own_session = False
    if opts.engine == "spark":
        require_extra("spark", "fleet --engine spark")
        from pyspark.sql import SparkSession

        from perfmodel.fleet.spark import list_remote, spark_session

        own_session = SparkSession.getActiveSession() is None
        spark = spark_session(opts.master, opts.spark_conf)
        if remote:
            since_ns = int(opts.since.timestamp() * 1e9) if opts.since else None
            refs = sorted(refs + list_remote(spark, remote, since_ns))
    what_if = ";".join(s.label for s in opts.scenarios)
    try:
        manifest = MANIFEST.empty_table() if opts.fresh else read_table(out, "manifest", MANIFEST)
        entries = manifest_entries(manifest)
        todo = [r for r in refs if not unchanged(r, entries, what_if)]
        if on_start is not None:
            on_start(len(todo))
        new = _analyse(opts, spark, todo, out, on_done)
    except Interrupted as stop:
        # What was finished is saved as a finished run would save it; the next run skips it.
        partial = {n: table_from_rows(stop.rows[n], schema) for n, schema in RESULT_TABLES.items()}
        _save(opts, out, manifest, what_if, partial, stop.finished, unusable)
        raise FleetInterrupted(len(stop.finished), len(todo), out) from None
    finally:
        if spark is not None and own_session:
            spark.stop()  # a session the caller made (a notebook, a test) stays theirs
    tables = _save(opts, out, manifest, what_if, new, todo, unusable)
    summary = summarise(tables, analysed_now=len(todo), skipped=len(refs) - len(todo))
    return FleetResult(tables, todo, len(refs) - len(todo), summary)


def _save(
    opts: FleetOptions,
    out: Path,
    manifest: Table,
    what_if: str,
    new: dict[str, Table],
    todo: Sequence[LogRef],
    unusable: Sequence[Unusable],
) -> dict[str, Table]:
    """Merge the rows of the logs of ``todo`` into the tables in ``out`` (each replaces its
    log's earlier rows), recompute the regressions and record them in the manifest."""
    # Entries discovery found unusable (a dangling link, a FIFO, a listing loop) are
    # accounted for as errors rows, found afresh by every run.
    found_unusable = table_from_rows(
        [
            {
                "log_path": u.path,
                "log_size": 0,
                "log_mtime_ns": 0,
                "kind": u.kind,
                "reason": u.reason,
            }
            for u in unusable
        ],
        RESULT_TABLES["errors"],
    )
    new["errors"] = concat([new["errors"], found_unusable])
    tables: dict[str, Table] = {}
    paths = [r.path for r in todo] + [u.path for u in unusable]
    for name, schema in RESULT_TABLES.items():
        old = schema.empty_table() if opts.fresh else read_table(out, name, schema)
        tables[name] = replace_logs(old, new[name], paths)
        if name == "apps":
            tables[name] = mark_duplicates(tables[name])
        write_table(out, name, tables[name])
    tables["regressions"] = find_regressions(tables["apps"], tables["stages"])
    write_table(out, "regressions", tables["regressions"])
    failed = dict(zip(new["errors"].column("log_path"), new["errors"].column("kind"), strict=True))
    now = datetime.now(UTC)
    done = table_from_rows(
        [
            {
                "log_path": r.path,
                "log_size": r.size,
                "log_mtime_ns": r.mtime_ns,
                "status": f"error:{failed[r.path]}" if r.path in failed else "ok",
                "what_if": what_if,
                "engine": opts.engine,
                "analysed_at": now,
            }
            for r in todo
        ],
        MANIFEST,
    )
    write_table(out, "manifest", replace_logs(manifest, done, paths))
    return tables


def _analyse(
    opts: FleetOptions,
    spark: object,
    todo: Sequence[LogRef],
    out: Path,
    on_done: Callable[[LogRef], None] | None,
) -> dict[str, Table]:
    if opts.engine == "spark":
        from perfmodel.fleet.spark import analyse_spark, default_staging

        return analyse_spark(
            spark,
            todo,
            opts.scenarios,
            memory_cap_bytes=opts.memory_cap_bytes,
            staging=opts.staging or default_staging(spark, out),
            transfer=opts.transfer,
        )
    rows: Rows = run_local(
        todo,
        opts.scenarios,
        jobs=opts.jobs,
        memory_cap_bytes=opts.memory_cap_bytes,
        on_done=on_done,
        sources=opts.sources,
    )
    return {name: table_from_rows(rows[name], schema) for name, schema in RESULT_TABLES.items()}
