"""Extract methods and constructors from Java source with tree-sitter.

Names follow javac's binary names so they match JFR frames: nested classes ``Outer$Inner``,
anonymous classes ``Outer$1`` numbered per enclosing class in source order, local classes
``Outer$1Local``, constructors ``<init>``.
"""

from __future__ import annotations

from collections import defaultdict

from tree_sitter import Node, Tree

from perfmodel.embed.source.doc import clean_javadoc
from perfmodel.embed.source.functions import ExtractedFunction, collapse_ws, erase_type

_CLASS_TYPES = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    }
)
_METHOD_TYPES = frozenset(
    {"method_declaration", "constructor_declaration", "compact_constructor_declaration"}
)
_MEMBER_PARENTS = frozenset(
    {"class_body", "interface_body", "enum_body", "enum_body_declarations", "annotation_type_body"}
)
_SIMPLE_VALUES = frozenset(
    {
        "identifier",
        "field_access",
        "this",
        "null_literal",
        "true",
        "false",
        "decimal_integer_literal",
        "hex_integer_literal",
        "string_literal",
        "character_literal",
        "decimal_floating_point_literal",
        "class_literal",
    }
)


def _text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


def _doc_before(node: Node) -> str:
    prev = node.prev_sibling
    if prev is not None and prev.type == "block_comment" and _text(prev).startswith("/**"):
        return clean_javadoc(_text(prev))
    return ""


def _params(node: Node) -> tuple[str, ...]:
    params = node.child_by_field_name("parameters")
    if params is None:
        return ()
    out: list[str] = []
    for p in params.named_children:
        if p.type == "formal_parameter":
            out.append(erase_type(_text(p.child_by_field_name("type"))))
        elif p.type == "spread_parameter":
            typ = next(
                (c for c in p.named_children if c.type not in ("modifiers", "variable_declarator")),
                None,
            )
            out.append(erase_type(_text(typ)) + "[]")
    return tuple(out)


def _is_simple_assignment(stmt: Node) -> bool:
    if stmt.type != "expression_statement" or not stmt.named_children:
        return False
    expr = stmt.named_children[0]
    if expr.type != "assignment_expression":
        return False
    right = expr.child_by_field_name("right")
    return right is not None and right.type in _SIMPLE_VALUES


def _trivial(node: Node, body: Node | None) -> str | None:
    """Why a method has nothing to learn from, or None."""
    if body is None:
        return "no-body"
    stmts = [c for c in body.named_children if c.type not in ("line_comment", "block_comment")]
    if not stmts:
        return "empty"
    if node.type != "method_declaration":
        if all(
            s.type == "explicit_constructor_invocation" or _is_simple_assignment(s) for s in stmts
        ):
            return "field-init-constructor"
        return None
    if len(stmts) != 1:
        return None
    s = stmts[0]
    if s.type == "return_statement":
        value = s.named_children[0] if s.named_children else None
        if value is None or value.type in _SIMPLE_VALUES:
            return "getter"
    if _is_simple_assignment(s):
        return "setter"
    if s.type == "throw_statement":
        return "throw-only"
    return None


def extract_java(tree: Tree, package_hint: str = "") -> list[ExtractedFunction]:
    """All methods and constructors in a parsed Java file, in source order."""
    root = tree.root_node
    package = package_hint
    for child in root.named_children:
        if child.type == "package_declaration":
            package = _text(
                next(
                    (
                        c
                        for c in child.named_children
                        if c.type in ("scoped_identifier", "identifier")
                    ),
                    None,
                )
            )
            break
    anon_counter: dict[str, int] = defaultdict(int)
    local_counter: dict[tuple[str, str], int] = defaultdict(int)
    out: list[ExtractedFunction] = []
    # (node, enclosing binary class name or None at top level, inside a method body?)
    stack: list[tuple[Node, str | None, bool]] = [(root, None, False)]
    while stack:
        node, scope, in_body = stack.pop()
        new_scope, new_in_body = scope, in_body
        if node.type in _CLASS_TYPES:
            name = _text(node.child_by_field_name("name"))
            if scope is None:
                new_scope = f"{package}.{name}" if package else name
            elif in_body:
                local_counter[(scope, name)] += 1
                new_scope = f"{scope}${local_counter[(scope, name)]}{name}"
            else:
                new_scope = f"{scope}${name}"
            new_in_body = False
        elif (
            node.type == "class_body"
            and node.parent is not None
            and node.parent.type in ("object_creation_expression", "enum_constant")
            and scope is not None
        ):
            anon_counter[scope] += 1
            new_scope = f"{scope}${anon_counter[scope]}"
            new_in_body = False
        elif node.type in _METHOD_TYPES and scope is not None:
            out.append(_method(node, scope, package))
            new_in_body = True
        for child in reversed(node.named_children):
            stack.append((child, new_scope, new_in_body))
    return out


def _method(node: Node, scope: str, package: str) -> ExtractedFunction:
    body = node.child_by_field_name("body")
    is_ctor = node.type != "method_declaration"
    name = "<init>" if is_ctor else _text(node.child_by_field_name("name"))
    src = node.text or b""
    sig_end = (body.start_byte - node.start_byte) if body is not None else len(src)
    return ExtractedFunction(
        qualified_name=f"{scope}.{name}",
        name=name,
        class_name=scope,
        package=package,
        language="java",
        signature=collapse_ws(src[:sig_end].decode("utf-8", "replace")),
        body=_text(body),
        doc=_doc_before(node),
        params=_params(node),
        line_start=node.start_point[0] + 1,
        line_end=node.end_point[0] + 1,
        start_byte=node.start_byte,
        end_byte=node.end_byte,
        trivial=_trivial(node, body),
    )
