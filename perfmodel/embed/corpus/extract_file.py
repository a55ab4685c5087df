"""Turn the functions of source files into labeled corpus rows (runs in worker processes).

Work is shipped in chunks of files from one root and one manifest, so each worker opens
the root (an archive, typically) once per chunk and holds no state between chunks.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field

from perfmodel.embed.corpus.manifest import Labeler, LabelSet, Manifest
from perfmodel.embed.source.extract import Extractor, function_ast
from perfmodel.embed.source.index import parse_file
from perfmodel.embed.source.names import name_tokens
from perfmodel.embed.source.roots import OpenRoot, SourceRoot

MIN_AST_NODES = 10
MAX_AST_NODES = 3000


@dataclass(frozen=True)
class Chunk:
    root: SourceRoot
    manifest: Manifest
    labels: LabelSet
    files: tuple[tuple[str, str], ...]  # (logical path, entry)


@dataclass
class ChunkResult:
    rows: list[dict[str, object]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    files: int = 0


def process_chunk(chunk: Chunk) -> ChunkResult:
    """Parse, label and filter every function in the chunk's files."""
    result = ChunkResult()
    labeler = Labeler(chunk.manifest, chunk.labels)
    extractor = Extractor()
    with OpenRoot(chunk.root) as opened:
        for logical, entry in chunk.files:
            try:
                parsed = parse_file(extractor, logical, opened.read(entry))
            except (OSError, ValueError, KeyError):
                result.skipped["unreadable-file"] += 1
                continue
            result.files += 1
            for fn in parsed.functions:
                decision = labeler.decide(fn.qualified_name)
                if decision.label is None:
                    reason = decision.excluded_by or "unmatched"
                    if reason != "unmatched":
                        result.skipped["excluded" if reason.startswith("exclude:") else reason] += 1
                    continue
                if fn.trivial is not None:
                    result.skipped[f"trivial:{fn.trivial}"] += 1
                    continue
                node = parsed.tree.root_node.descendant_for_byte_range(fn.start_byte, fn.end_byte)
                if node is not None and node.has_error:
                    result.skipped["parse-error"] += 1
                    continue
                ast, n_nodes = function_ast(parsed, fn)
                if n_nodes < MIN_AST_NODES:
                    result.skipped["too-small"] += 1
                    continue
                if n_nodes > MAX_AST_NODES:
                    result.skipped["too-large"] += 1
                    continue
                assert decision.rule is not None
                result.rows.append(
                    {
                        "id": hashlib.sha1(
                            f"{chunk.root.name}|{logical}|{fn.qualified_name}|"
                            f"{fn.line_start}".encode()
                        ).hexdigest()[:16],
                        "qualified_name": fn.qualified_name,
                        "name": fn.name,
                        "class_name": fn.class_name or "",
                        "package": fn.package,
                        "language": fn.language,
                        "label": decision.label,
                        "signature": fn.signature,
                        "body": fn.body,
                        "doc": fn.doc,
                        "ast": json.dumps(ast, separators=(",", ":")),
                        "ast_nodes": n_nodes,
                        "name_tokens": list(name_tokens(fn.qualified_name)),
                        "root": chunk.root.name,
                        "path": entry,
                        "line_start": fn.line_start,
                        "line_end": fn.line_end,
                        "manifest": chunk.manifest.path.name,
                        "rule": decision.rule.pattern.text,
                    }
                )
    return result
