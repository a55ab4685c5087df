"""Extract template-member functions from Scala source with tree-sitter.

Names follow scalac's JVM names so they match JFR frames: members of ``object Foo`` live
in class ``Foo$``, nested types are joined with ``$``, package objects are
``pkg.name.package$``. Local defs inside function bodies are part of their enclosing
function (scalac lifts them to ``name$1``, which frames attribute back via the locator).
"""

from __future__ import annotations

from tree_sitter import Node, Tree

from perfmodel.embed.source.doc import clean_scaladoc
from perfmodel.embed.source.functions import ExtractedFunction, collapse_ws, erase_type

_TYPE_DEFS = {
    "class_definition": "",
    "trait_definition": "",
    "object_definition": "$",
    "enum_definition": "",
}
_FUNCTIONS = frozenset({"function_definition", "function_declaration"})
_SIMPLE_BODIES = frozenset(
    {
        "identifier",
        "field_expression",
        "integer_literal",
        "floating_point_literal",
        "string",
        "boolean_literal",
        "null_literal",
        "unit",
        "character_literal",
        "wildcard",
    }
)


def _text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def _join(scope: str, name: str) -> str:
    return f"{scope}{name}" if scope.endswith("$") else f"{scope}${name}"


def _doc_before(node: Node) -> str:
    prev = node.prev_sibling
    if prev is not None and prev.type == "block_comment" and _text(prev).startswith("/**"):
        return clean_scaladoc(_text(prev))
    return ""


def _trivial(body: Node | None) -> str | None:
    if body is None:
        return "no-body"
    node = body
    if node.type == "block":
        stmts = [c for c in node.named_children if c.type not in ("comment", "block_comment")]
        if not stmts:
            return "empty"
        if len(stmts) != 1:
            return None
        node = stmts[0]
    if node.type in _SIMPLE_BODIES:
        return "getter"
    if node.type == "identifier" or _text(node) == "???":
        return "throw-only"
    return None


def _params(node: Node) -> tuple[str, ...]:
    out: list[str] = []
    for plist in node.children_by_field_name("parameters"):
        for p in plist.named_children:
            if p.type == "parameter":
                out.append(erase_type(_text(p.child_by_field_name("type"))))
    return tuple(out)


def extract_scala(tree: Tree, package_hint: str = "") -> list[ExtractedFunction]:
    """All functions that are members of classes, traits and objects (and top-level defs)."""
    out: list[ExtractedFunction] = []
    top = tree.root_node.named_children
    # package clauses are authoritative; the hint (from the file's directory) is a fallback
    declared = any(n.type == "package_clause" for n in top)
    _visit_statements(top, "" if declared else package_hint, None, out)
    return out


def _visit_statements(
    nodes: list[Node], package: str, scope: str | None, out: list[ExtractedFunction]
) -> None:
    for node in nodes:
        if node.type == "package_clause":
            name = _text(node.child_by_field_name("name"))
            body = node.child_by_field_name("body")
            if body is not None:
                inner = f"{package}.{name}" if package else name
                _visit_statements(body.named_children, inner, None, out)
            else:
                package = f"{package}.{name}" if package else name
        elif node.type == "package_object":
            name = _text(node.child_by_field_name("name"))
            pkg = f"{package}.{name}" if package else name
            _visit_template(node, pkg, f"{pkg}.package$", out)
        elif node.type in _TYPE_DEFS:
            name = _text(node.child_by_field_name("name")) + _TYPE_DEFS[node.type]
            if scope is None:
                binary = f"{package}.{name}" if package else name
            else:
                binary = _join(scope, name)
            _visit_template(node, package, binary, out)
        elif node.type in _FUNCTIONS:
            owner = (
                scope if scope is not None else (f"{package}.package$" if package else "package$")
            )
            out.append(_function(node, owner, package))


def _visit_template(node: Node, package: str, binary: str, out: list[ExtractedFunction]) -> None:
    body = node.child_by_field_name("body")
    if body is not None:
        _visit_statements(body.named_children, package, binary, out)


def _function(node: Node, owner: str, package: str) -> ExtractedFunction:
    body = node.child_by_field_name("body")
    raw_name = _text(node.child_by_field_name("name"))
    name = "<init>" if raw_name == "this" else raw_name
    src = node.text or b""
    sig_end = len(src)
    if body is not None:
        # the signature ends before '=' that introduces the body
        sig_end = body.start_byte - node.start_byte
        while sig_end > 0 and src[sig_end - 1 : sig_end] in (b" ", b"\n", b"\t", b"="):
            sig_end -= 1
    return ExtractedFunction(
        qualified_name=f"{owner}.{name}",
        name=name,
        class_name=owner,
        package=package,
        language="scala",
        signature=collapse_ws(src[:sig_end].decode("utf-8", "replace")),
        body=_text(body),
        doc=_doc_before(node),
        params=_params(node),
        line_start=node.start_point[0] + 1,
        line_end=node.end_point[0] + 1,
        start_byte=node.start_byte,
        end_byte=node.end_byte,
        trivial=_trivial(body),
    )
