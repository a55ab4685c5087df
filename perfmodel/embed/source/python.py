"""Extract functions and methods from Python source with tree-sitter.

Names are module + ``__qualname__`` (``socket.socket.recv``, ``outer.<locals>.inner``),
which is how Python itself names code objects; docstrings become the doc and are left
out of body and AST.
"""

from __future__ import annotations

import ast as pyast

from tree_sitter import Node, Tree

from perfmodel.embed.source.doc import clean_docstring
from perfmodel.embed.source.functions import ExtractedFunction, collapse_ws

_SIMPLE_VALUES = frozenset(
    {
        "identifier",
        "attribute",
        "string",
        "integer",
        "float",
        "true",
        "false",
        "none",
        "tuple",
        "list",
        "dictionary",
    }
)


def _text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def _docstring_node(body: Node | None) -> Node | None:
    if body is None or not body.named_children:
        return None
    first = body.named_children[0]
    if first.type == "expression_statement" and len(first.named_children) == 1:
        if first.named_children[0].type in ("string", "concatenated_string"):
            return first
    return None


def _docstring_text(node: Node) -> str:
    raw = _text(node.named_children[0])
    try:
        value = pyast.literal_eval(raw)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        value = raw.strip("\"'rRbBuUfF")
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _trivial(stmts: list[Node]) -> str | None:
    if not stmts:
        return "empty"
    if all(s.type == "pass_statement" or _text(s) == "..." for s in stmts):
        return "empty"
    if len(stmts) != 1:
        return None
    s = stmts[0]
    text = _text(s)
    if s.type == "raise_statement" and "NotImplementedError" in text:
        return "throw-only"
    if s.type == "return_statement":
        value = s.named_children[0] if s.named_children else None
        if value is None or value.type in _SIMPLE_VALUES:
            return "getter"
    if s.type == "expression_statement" and s.named_children:
        expr = s.named_children[0]
        if expr.type == "assignment":
            right = expr.child_by_field_name("right")
            if right is not None and right.type in _SIMPLE_VALUES:
                return "setter"
    return None


def extract_python(tree: Tree, module: str, *, is_package: bool = False) -> list[ExtractedFunction]:
    """All functions in a parsed Python module, in source order.

    ``is_package`` marks an ``__init__.py``: its package is the module itself.
    """
    package = module if is_package or "." not in module else module.rsplit(".", 1)[0]
    out: list[ExtractedFunction] = []
    stack: list[tuple[Node, tuple[str, ...], str | None]] = [(tree.root_node, (), None)]
    while stack:
        node, scope, cls = stack.pop()
        children: list[tuple[Node, tuple[str, ...], str | None]] = []
        for child in node.named_children:
            target = (
                child.child_by_field_name("definition")
                if child.type == "decorated_definition"
                else child
            )
            if target is None:
                continue
            if target.type == "class_definition":
                name = _text(target.child_by_field_name("name"))
                inner = (*scope, name)
                children.append(
                    (
                        target.child_by_field_name("body") or target,
                        inner,
                        ".".join((module, *inner)),
                    )
                )
            elif target.type == "function_definition":
                out.append(_function(target, child, scope, cls, module, package))
                name = _text(target.child_by_field_name("name"))
                body = target.child_by_field_name("body")
                if body is not None:
                    children.append((body, (*scope, name, "<locals>"), None))
            elif child.type not in (
                "expression_statement",
                "import_statement",
                "import_from_statement",
                "comment",
            ):
                children.append((child, scope, cls))
        stack.extend(reversed(children))
    out.sort(key=lambda f: f.start_byte)
    return out


def _function(
    node: Node, outer: Node, scope: tuple[str, ...], cls: str | None, module: str, package: str
) -> ExtractedFunction:
    name = _text(node.child_by_field_name("name"))
    body = node.child_by_field_name("body")
    doc_node = _docstring_node(body)
    src = outer.text or b""
    # the signature ends at the ':' before the body (a comment may follow that colon)
    colon = next((c for c in reversed(node.children) if c.type == ":"), None)
    sig_end = (colon.start_byte if colon is not None else node.end_byte) - outer.start_byte
    signature = collapse_ws(src[:sig_end].decode("utf-8", "replace")).rstrip(":").rstrip()
    stmts = [
        c
        for c in (body.named_children if body is not None else [])
        if c.type != "comment" and c is not doc_node and c != doc_node
    ]
    body_text = ""
    if body is not None:
        raw = body.text or b""
        if doc_node is not None:
            lo = doc_node.start_byte - body.start_byte
            hi = doc_node.end_byte - body.start_byte
            raw = raw[:lo] + raw[hi:]
        body_text = raw.decode("utf-8", "replace").strip()
    parameters = node.child_by_field_name("parameters")
    return ExtractedFunction(
        qualified_name=".".join((module, *scope, name)),
        name=name,
        class_name=cls,
        package=package,
        language="python",
        signature=signature,
        body=body_text,
        doc=clean_docstring(_docstring_text(doc_node)) if doc_node is not None else "",
        params=tuple(
            _text(p).split(":")[0].split("=")[0].strip().lstrip("*")
            for p in (parameters.named_children if parameters is not None else [])
        ),
        line_start=outer.start_point[0] + 1,
        line_end=outer.end_point[0] + 1,
        start_byte=node.start_byte,
        end_byte=node.end_byte,
        trivial=_trivial(stmts),
        skip_spans=((doc_node.start_byte, doc_node.end_byte),) if doc_node is not None else (),
    )
