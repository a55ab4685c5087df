"""Map a sampled stack frame to the source and documentation of its function.

When no source is available (Spark's own Scala classes usually ship only as jars, hidden
lambda classes have no source at all) the result still carries the frame's demangled
name and its subtokens, so the resource models can fall back to identifiers.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from perfmodel.embed.source.ast_form import AstNode
from perfmodel.embed.source.extract import ParsedSource, function_ast
from perfmodel.embed.source.frames import ParsedFrame, parse_frame
from perfmodel.embed.source.functions import ExtractedFunction, erase_type
from perfmodel.embed.source.index import SourceFile, SourceIndex, parse_file
from perfmodel.embed.source.names import name_tokens
from perfmodel.embed.source.roots import SourceRoot, default_roots

_MAX_PACKAGE_SCAN = 64


@dataclass(frozen=True)
class LocatedSource:
    """What the locator found for one frame.

    ``qualified_name`` is the frame's own (demangled) name; ``source_name`` the
    function whose source was found — they differ for closures, where the code of
    ``RDD.$anonfun$mapPartitions$2`` is written inside ``RDD.mapPartitions``.
    ``ast`` uses the corpus format (see ``ast_form``). ``note`` says how the match was
    made or why nothing was found.
    """

    frame: str
    qualified_name: str
    language: str
    source_found: bool
    name_tokens: tuple[str, ...]
    path: str | None = None
    source_name: str | None = None
    line_start: int | None = None
    line_end: int | None = None
    signature: str | None = None
    code: str | None = None
    doc: str | None = None
    ast: AstNode | None = None
    synthetic: str | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["name_tokens"] = list(self.name_tokens)
        return d


class SourceLocator:
    """Locates frames in a set of source roots; reuse one instance for many frames."""

    def __init__(
        self, roots: list[SourceRoot] | None = None, cache_dir: Path | None = None
    ) -> None:
        self.index = SourceIndex(default_roots() if roots is None else roots, cache_dir=cache_dir)

    def close(self) -> None:
        self.index.close()

    def __enter__(self) -> SourceLocator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def locate(self, frame: str) -> LocatedSource:
        """Find the source of ``frame`` (any format ``parse_frame`` understands)."""
        parsed = parse_frame(frame)
        if parsed.kind == "python":
            return self._locate_python(parsed)
        if parsed.kind == "jvm":
            return self._locate_jvm(parsed)
        return _name_only(parsed, "unrecognised frame format")

    # -- JVM ---------------------------------------------------------------------------
    def _locate_jvm(self, pf: ParsedFrame) -> LocatedSource:
        if pf.synthetic == "lambda-class":
            return _name_only(pf, "hidden lambda class: no source method is named in the frame")
        assert pf.top_class is not None and pf.class_name is not None
        base = pf.top_class.replace(".", "/")
        files = [
            self.index.files[p] for p in (base + ".java", base + ".scala") if p in self.index.files
        ]
        found = self._match_jvm(pf, files)
        if found is None and pf.package is not None:
            # the class may live in a file named otherwise (Scala, non-public Java classes)
            directory = pf.package.replace(".", "/")
            others = [
                sf
                for lang in ("scala", "java")
                for sf in self.index.in_directory(directory, lang)
                if sf not in files
            ][:_MAX_PACKAGE_SCAN]
            found = self._match_jvm(pf, others)
        if found is None:
            why = (
                "no source file for the class in the indexed roots"
                if not files
                else "method not found in the class's source"
            )
            return _name_only(pf, why)
        sf, parsed, fn, how = found
        return _located(pf, sf, parsed, fn, how)

    def _match_jvm(
        self, pf: ParsedFrame, files: list[SourceFile]
    ) -> tuple[SourceFile, ParsedSource, ExtractedFunction, str] | None:
        assert pf.class_name is not None
        wanted = {pf.class_name}
        # Scala: object members have static forwarders on the class and vice versa
        wanted.add(pf.class_name[:-1] if pf.class_name.endswith("$") else pf.class_name + "$")
        for sf in files:
            parsed = self.index.parse(sf)
            cands = [f for f in parsed.functions if f.class_name in wanted and f.name == pf.method]
            if not cands:
                continue
            fn, how = _pick_overload(cands, pf)
            return sf, parsed, fn, how
        return None

    # -- Python ------------------------------------------------------------------------
    def _locate_python(self, pf: ParsedFrame) -> LocatedSource:
        assert pf.file is not None
        candidates: list[tuple[SourceFile | None, ParsedSource, str]] = []
        if os.path.isabs(pf.file) and os.path.isfile(pf.file):
            logical = self._logical_for_abs(pf.file)
            parsed = parse_file(self.index._extractor, logical, Path(pf.file).read_bytes())
            candidates.append((None, parsed, pf.file))
        else:
            for indexed in self.index.by_suffix(pf.file):
                candidates.append((indexed, self.index.parse(indexed), indexed.location))
        if not candidates:
            return _name_only(pf, f"{pf.file} not found in the indexed roots")
        if pf.method == "<module>":
            return _name_only(pf, "module-level code is not a function")
        for sf, parsed, location in candidates:
            fn = _python_function_at(parsed, pf)
            if fn is not None:
                return _located(
                    pf,
                    sf,
                    parsed,
                    fn,
                    "file and line" if pf.line else "file and name",
                    location=location,
                )
        return _name_only(pf, f"no function {pf.method!r} at line {pf.line} in {pf.file}")

    def _logical_for_abs(self, path: str) -> str:
        real = os.path.realpath(path)
        best = ""
        for root in self.index.roots:
            top = os.path.realpath(root.path)
            if not root.is_archive and real.startswith(top + os.sep):
                rel = os.path.relpath(real, top).replace(os.sep, "/")
                if not best or len(rel) < len(best):
                    best = rel
        return best or os.path.basename(real)


def _python_function_at(parsed: ParsedSource, pf: ParsedFrame) -> ExtractedFunction | None:
    named = [f for f in parsed.functions if f.name == pf.method]
    if pf.line is None:
        return named[0] if named else None
    spanning = [f for f in named if f.line_start <= pf.line <= f.line_end]
    # innermost: the latest-starting function that still spans the line
    return max(spanning, key=lambda f: f.line_start) if spanning else None


def _pick_overload(
    cands: list[ExtractedFunction], pf: ParsedFrame
) -> tuple[ExtractedFunction, str]:
    if len(cands) == 1:
        return cands[0], "class and method"
    if pf.line is not None:
        spanning = [f for f in cands if f.line_start <= pf.line <= f.line_end]
        if spanning:
            return spanning[0], "class, method and line"
    if pf.params is not None:
        want = tuple(erase_type(p) for p in pf.params)
        # JVM frames show a Scala object's or closure's captured receiver as an extra parameter
        for f in cands:
            if f.params == want or (pf.synthetic and f.params == want[1:]):
                return f, "class, method and parameter types"
        same_arity = [f for f in cands if len(f.params) == len(want)]
        if same_arity:
            return same_arity[0], "class, method and arity"
    return cands[0], "class and method (first overload)"


def _located(
    pf: ParsedFrame,
    sf: SourceFile | None,
    parsed: ParsedSource,
    fn: ExtractedFunction,
    how: str,
    location: str | None = None,
) -> LocatedSource:
    ast, _ = function_ast(parsed, fn)
    qualified = pf.qualified_name if pf.kind == "jvm" else fn.qualified_name
    return LocatedSource(
        frame=pf.raw,
        qualified_name=qualified,
        language=fn.language,
        source_found=True,
        name_tokens=pf.name_tokens if pf.kind == "jvm" else name_tokens(fn.qualified_name),
        path=location or (sf.location if sf is not None else None),
        source_name=fn.qualified_name,
        line_start=fn.line_start,
        line_end=fn.line_end,
        signature=fn.signature,
        code=fn.code,
        doc=fn.doc,
        ast=ast,
        synthetic=pf.synthetic,
        note=f"matched by {how}",
    )


def _name_only(pf: ParsedFrame, why: str) -> LocatedSource:
    return LocatedSource(
        frame=pf.raw,
        qualified_name=pf.qualified_name,
        language=pf.language_guess,
        source_found=False,
        name_tokens=pf.name_tokens,
        synthetic=pf.synthetic,
        note=why,
    )


def locate(frame: str, roots: list[SourceRoot] | None = None) -> LocatedSource:
    """One-off convenience; for many frames build one ``SourceLocator`` and reuse it."""
    with SourceLocator(roots) as locator:
        return locator.locate(frame)
