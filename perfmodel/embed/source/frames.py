"""Parse stack-frame names as JFR, Java stack traces, async-profiler and py-spy print them.

A sampled frame names compiled code, not source: nested classes are joined with ``$``,
lambdas and Scala closures get synthetic names (``lambda$main$0``, ``$anonfun$map$2``,
``Foo$$Lambda$12/0x...``), Scala objects end in ``$`` and operators are encoded
(``$plus$plus``). To find the source we undo that mangling and keep what the frame
still tells us about the enclosing source method and class.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from perfmodel.embed.source.names import name_tokens

SCALA_OPERATORS = {
    "$plus": "+",
    "$minus": "-",
    "$times": "*",
    "$div": "/",
    "$percent": "%",
    "$less": "<",
    "$greater": ">",
    "$eq": "=",
    "$bang": "!",
    "$colon": ":",
    "$amp": "&",
    "$bar": "|",
    "$up": "^",
    "$tilde": "~",
    "$qmark": "?",
    "$at": "@",
    "$hash": "#",
    "$bslash": "\\",
}

# Packages whose JVM code is written in Scala; used only to guess the language of frames
# whose source is not available.
_SCALA_PREFIXES = ("scala.", "org.apache.spark.", "akka.", "breeze.", "kafka.")
_JAVA_IN_SPARK = (
    "org.apache.spark.network.",
    "org.apache.spark.unsafe.",
    "org.apache.spark.util.collection.unsafe.",
    "org.apache.spark.sql.catalyst.expressions.Unsafe",
    "org.apache.spark.sql.catalyst.expressions.GeneratedClass",
    "org.apache.spark.memory.MemoryConsumer",
    "org.apache.spark.shuffle.sort.",
    "org.apache.spark.api.java.",
    "org.apache.spark.sql.execution.vectorized.",
    "org.apache.spark.sql.vectorized.",
)

_PY_FRAME = re.compile(
    r"^\s*(?P<func>[^\s()]+(?: [^\s()]+)*?)\s+"
    r"\((?P<file>[^():]+\.pyx?|<frozen [\w.]+>)(?::(?P<line>\d+))?\)\s*$"
)
_PY_TRACEBACK = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_JVM_STACKTRACE = re.compile(
    r"^\s*(?:at\s+)?(?:[\w.$-]+(?:@[\w.-]+)?/)?(?P<name>[\w.$/<>]+)\((?P<where>[^)]*)\)\s*$"
)
_JFR_FRAME = re.compile(
    r"^\s*(?P<name>[\w.$/<>:]+)\s*(?:\((?P<params>[^)]*)\)(?P<ret>[\w/$;\[]*))?"
    r"\s*(?:line:\s*(?P<line>\d+))?\s*(?:bci:\s*\d+)?"
    r"(?:\s+\[?(?:JIT compiled|Interpreted|Inlined|Native)[^\]]*\]?)?\s*$"
)
_DESCRIPTOR_TYPE = re.compile(r"\[*(?:[BCDFIJSZV]|L[^;]+;)")
_PRIMITIVES = {
    "B": "byte",
    "C": "char",
    "D": "double",
    "F": "float",
    "I": "int",
    "J": "long",
    "S": "short",
    "Z": "boolean",
    "V": "void",
}


@dataclass(frozen=True)
class ParsedFrame:
    """What a frame name says about its code, with compiler mangling undone.

    ``class_name`` is the JVM binary name (``java.util.HashMap$TreeNode``) and
    ``top_class`` the top-level class whose source file holds it. ``method`` is the
    source-level name of the method the code is written in (``mapPartitions`` for
    ``$anonfun$mapPartitions$2``), ``raw_method`` what the frame said. ``synthetic``
    names the mangling kind (``lambda``, ``anonfun``, ``lambda-class``, ``anon-class``)
    or is None for an ordinary method.
    """

    raw: str
    kind: str  # "jvm" | "python" | "unknown"
    qualified_name: str
    method: str
    raw_method: str
    package: str | None = None
    class_name: str | None = None
    top_class: str | None = None
    synthetic: str | None = None
    params: tuple[str, ...] | None = None
    line: int | None = None
    file: str | None = None
    language_guess: str = "unknown"

    @property
    def name_tokens(self) -> tuple[str, ...]:
        """Subtokens of the demangled name: what a model can use when no source exists."""
        return name_tokens(self.qualified_name)


def decode_scala_operators(name: str) -> str:
    """``$plus$plus`` -> ``++``; leaves other ``$`` sequences alone."""
    if "$" not in name:
        return name
    out = name
    for enc in sorted(SCALA_OPERATORS, key=len, reverse=True):
        out = out.replace(enc, SCALA_OPERATORS[enc])
    return out


def _descriptor_params(desc: str) -> tuple[str, ...]:
    """Turn ``[BII`` into ``('byte[]', 'int', 'int')``."""
    params: list[str] = []
    for tok in _DESCRIPTOR_TYPE.findall(desc):
        dims = tok.count("[")
        base = tok[dims:]
        typ = _PRIMITIVES[base] if len(base) == 1 else base[1:-1].replace("/", ".")
        params.append(typ + "[]" * dims)
    return tuple(params)


def _split_params(text: str) -> tuple[str, ...]:
    text = text.strip()
    if not text:
        return ()
    if (
        "," not in text
        and ";" in text
        or re.fullmatch(r"[\[BCDFIJSZL/;\w$]+", text)
        and (text[0] in "[L" or set(text) <= set("BCDFIJSZ["))
    ):
        return _descriptor_params(text)
    return tuple(p.strip() for p in text.split(",") if p.strip())


def _demangle_method(raw_method: str) -> tuple[str, str | None]:
    """Source-level method name and the kind of mangling found."""
    m = raw_method
    if m.startswith("lambda$"):
        # javac: lambda$<enclosing method>$<n>; lambda$static$0 for static initialisers
        parts = m.split("$")
        enclosing = parts[1] if len(parts) > 1 and parts[1] else m
        return {"static": "<clinit>", "new": "<init>"}.get(enclosing, enclosing), "lambda"
    if "$anonfun$" in m:
        # scalac 2.12+: $anonfun$<method>$<n>[$adapted]; nested: $anonfun$foo$1$anonfun$apply$2
        first = m.split("$anonfun$")[1]
        enclosing = first.split("$")[0] or m
        enclosing = decode_scala_operators(enclosing)
        return ("<init>" if enclosing == "new" else enclosing), "anonfun"
    if m.endswith("$") and len(m) > 1 and not m.startswith("$"):
        # trait static forwarder (Trait.method$)
        return decode_scala_operators(m[:-1]), None
    if "$$" in m and not m.startswith("$"):
        # expanded name of a private member: org$apache$spark$rdd$RDD$$dependencies_
        return decode_scala_operators(m.rsplit("$$", 1)[1]), None
    if m.endswith("$adapted"):
        return decode_scala_operators(m[: -len("$adapted")]), None
    if m.startswith("$init$"):
        return "<init>", None
    return decode_scala_operators(m), None


def _class_parts(binary: str) -> tuple[str | None, str, str | None]:
    """(package, top-level class, kind of synthetic class) for a JVM binary class name."""
    pkg, _, simple = binary.rpartition(".")
    synthetic = None
    if "$$Lambda" in simple or "$Lambda$" in simple:
        synthetic = "lambda-class"
    elif re.search(r"\$\$anon(fun)?\$|\$\d+(\$|$)", simple):
        synthetic = "anon-class"
    top = simple.split("$", 1)[0] or simple
    return (pkg or None), top, synthetic


def _guess_jvm_language(binary: str, raw_method: str) -> str:
    if "$anonfun$" in raw_method or "$anonfun$" in binary or "$$anon$" in binary:
        return "scala"
    if binary.startswith(_JAVA_IN_SPARK):
        return "java"
    if binary.startswith(_SCALA_PREFIXES) or (binary.endswith("$") and not binary.endswith("$$")):
        return "scala"
    return "java"


def _parse_python(raw: str) -> ParsedFrame | None:
    m = _PY_FRAME.match(raw) or _PY_TRACEBACK.match(raw)
    if not m:
        return None
    func = m.group("func").strip()
    file = m.group("file")
    if file.startswith("<frozen "):
        # frozen stdlib modules (codecs, os, importlib._bootstrap) still ship their .py
        file = file[len("<frozen ") : -1].replace(".", "/") + ".py"
    line = int(m.group("line")) if m.group("line") else None
    stem = file.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    method = func.rsplit(".", 1)[-1]
    qualified = func if "." in func else (f"{stem}.{func}" if func != "<module>" else stem)
    return ParsedFrame(
        raw=raw,
        kind="python",
        qualified_name=qualified,
        method=method,
        raw_method=func,
        line=line,
        file=file,
        language_guess="python",
    )


def _parse_jvm(raw: str) -> ParsedFrame | None:
    text = raw.strip()
    line: int | None = None
    params: tuple[str, ...] | None = None
    m = _JVM_STACKTRACE.match(text)
    if m and (
        m.group("where").endswith(("Native Method)", "Native Method"))
        or ".java" in m.group("where")
        or ".scala" in m.group("where")
        or m.group("where") in ("Native Method", "Unknown Source")
    ):
        name = m.group("name")
        lm = re.search(r":(\d+)$", m.group("where"))
        line = int(lm.group(1)) if lm else None
    else:
        m2 = _JFR_FRAME.match(text)
        if not m2:
            return None
        name = m2.group("name")
        if m2.group("params") is not None:
            params = _split_params(m2.group("params"))
        line = int(m2.group("line")) if m2.group("line") else None
    name = name.replace("/", ".").replace("::", ".")
    name = re.sub(r"_\[[a-z0-9]\]$", "", name)  # async-profiler frame type suffix
    if "." not in name:
        return None
    binary, _, raw_method = name.rpartition(".")
    # hidden lambda classes print as Foo$$Lambda$12/0x0000000800c3b840 (slash became dot)
    hidden = re.match(r"^(.*\$\$Lambda(?:\$\d+)?)\.(0x[0-9a-fA-F]+)$", binary)
    if hidden:
        binary = hidden.group(1)
    if not binary or not raw_method:
        return None
    method, synthetic_method = _demangle_method(raw_method)
    pkg, top, synthetic_class = _class_parts(binary)
    top_class = f"{pkg}.{top}" if pkg else top
    return ParsedFrame(
        raw=raw,
        kind="jvm",
        qualified_name=f"{binary}.{raw_method}",
        method=method,
        raw_method=raw_method,
        package=pkg,
        class_name=binary,
        top_class=top_class,
        synthetic=synthetic_method or synthetic_class,
        params=params,
        line=line,
        language_guess=_guess_jvm_language(binary, raw_method),
    )


def parse_frame(raw: str) -> ParsedFrame:
    """Parse one frame; never raises — an unrecognised frame comes back with ``kind='unknown'``."""
    text = raw.strip()
    parsed = _parse_python(text) or _parse_jvm(text)
    if parsed is not None:
        return parsed
    return ParsedFrame(raw=raw, kind="unknown", qualified_name=text, method=text, raw_method=text)
