"""The corpus dataset on disk: schema, writing and reading.

A build directory holds ``functions.parquet`` (one row per labeled function, schema
below), ``stats.json``/``stats.md`` and ``build.json`` (versions of everything that went
in). Consumers (the resource models) should read it with ``read_corpus`` and check
``SCHEMA_VERSION``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from perfmodel.atomic import make_output_dir, replacing, write_atomically

SCHEMA_VERSION = 1
FUNCTIONS_FILE = "functions.parquet"
BUILD_FILE = "build.json"


@dataclass(frozen=True)
class CorpusRecord:
    """One labeled function.

    ``ast`` is JSON text of the nested-list AST (``[type, [children...]]`` for inner
    nodes, ``[type, token]`` for leaves; see ``perfmodel.embed.source.ast_form``).
    ``package`` is the split unit (Java/Scala package, Python package or top-level
    module); ``split`` is ``train`` or ``test``. ``path`` is the file inside ``root``.
    """

    id: str
    qualified_name: str
    name: str
    class_name: str
    package: str
    language: str
    label: str
    signature: str
    body: str
    doc: str
    ast: str
    ast_nodes: int
    name_tokens: list[str]
    root: str
    path: str
    line_start: int
    line_end: int
    manifest: str
    rule: str
    split: str

    def ast_tree(self) -> list[Any]:
        return json.loads(self.ast)


def arrow_schema() -> pa.Schema:
    cols = []
    for f in fields(CorpusRecord):
        typ = f.type if isinstance(f.type, str) else f.type.__name__
        cols.append(
            pa.field(
                f.name,
                pa.list_(pa.string())
                if typ == "list[str]"
                else pa.int32()
                if typ == "int"
                else pa.string(),
                nullable=False,
            )
        )
    return pa.schema(cols, metadata={b"perfmodel_corpus_schema": str(SCHEMA_VERSION).encode()})


def write_corpus(records: list[CorpusRecord], out_dir: Path, build_info: dict[str, Any]) -> Path:
    """Write the records and ``build.json``; returns the parquet path."""
    make_output_dir(out_dir)
    schema = arrow_schema()
    columns = {f.name: [getattr(r, f.name) for r in records] for f in fields(CorpusRecord)}
    table = pa.Table.from_pydict(columns, schema=schema)
    path = out_dir / FUNCTIONS_FILE
    with replacing(path) as tmp:
        pq.write_table(table, str(tmp), compression="zstd", row_group_size=4096)
    info = {"schema_version": SCHEMA_VERSION, **build_info}
    write_atomically(out_dir / BUILD_FILE, json.dumps(info, indent=2, sort_keys=True) + "\n")
    return path


def read_corpus(path: Path) -> list[CorpusRecord]:
    """Read a build directory or its parquet file; rejects other schema versions."""
    file = path / FUNCTIONS_FILE if path.is_dir() else path
    table = pq.read_table(file)
    meta = table.schema.metadata or {}
    version = int(meta.get(b"perfmodel_corpus_schema", b"0"))
    if version != SCHEMA_VERSION:
        raise ValueError(f"{file}: corpus schema {version}, this code reads {SCHEMA_VERSION}")
    return [CorpusRecord(**row) for row in table.to_pylist()]


def record_dict(record: CorpusRecord) -> dict[str, Any]:
    return asdict(record)
