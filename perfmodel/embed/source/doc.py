"""Clean documentation comments down to prose.

The doc model reads words, not markup: Javadoc tags and HTML, Scaladoc wiki syntax and
reStructuredText roles would otherwise dominate its vocabulary. Parameter and return
descriptions are kept (they describe behaviour); bookkeeping tags are dropped.
"""

from __future__ import annotations

import html
import inspect
import re

_DROP_TAGS = (
    "@since",
    "@author",
    "@version",
    "@see",
    "@serial",
    "@serialData",
    "@serialField",
    "@spec",
    "@jls",
    "@jvms",
    "@implNote",
    "@apiNote",
    "@implSpec",
    "@group",
    "@note",
    "@example",
    "@define",
    "@usecase",
    "@tparam",
    "@hideconstructor",
    "@inheritDoc",
    "@todo",
)


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _strip_comment_frame(raw: str) -> str:
    """Remove ``/**``, ``*/`` and the leading ``*`` of each line."""
    body = raw.strip()
    body = re.sub(r"^/\*+", "", body)
    body = re.sub(r"\*+/$", "", body)
    return "\n".join(re.sub(r"^\s*\*( |$)?", "", line) for line in body.splitlines())


def _drop_block_tags(text: str) -> str:
    """Drop bookkeeping block tags, rewrite @param/@return/@throws into plain words."""
    out: list[str] = []
    dropping = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("@"):
            tag = stripped.split(None, 1)[0]
            dropping = tag in _DROP_TAGS
            if dropping:
                continue
            rest = stripped[len(tag) :].strip()
            if tag == "@param":
                line = rest
            elif tag in ("@return", "@returns"):
                line = "returns " + rest
            elif tag in ("@throws", "@exception"):
                line = "throws " + rest
            elif tag == "@deprecated":
                line = "deprecated " + rest
            else:
                line = rest
        elif dropping:
            continue
        out.append(line)
    return "\n".join(out)


def clean_javadoc(raw: str) -> str:
    """Javadoc comment (with ``/** */``) -> plain text."""
    text = _strip_comment_frame(raw)
    text = _drop_block_tags(text)
    text = re.sub(r"\{@(?:code|literal|value)\s*([^{}]*)\}", r"\1", text)
    text = re.sub(
        r"\{@(?:link|linkplain)\s+([^\s{}]+)(?:\s+([^{}]*))?\}",
        lambda m: m.group(2) or m.group(1).replace("#", " ").strip(),
        text,
    )
    text = re.sub(r"\{@(?:inheritDoc|docRoot)\}", "", text)
    text = re.sub(r"\{@\w+\s*([^{}]*)\}", r"\1", text)
    text = re.sub(r"<pre>.*?</pre>", " ", text, flags=re.S | re.I)
    text = re.sub(r"</?[A-Za-z][^>]*>", " ", text)
    return _collapse(html.unescape(text))


def clean_scaladoc(raw: str) -> str:
    """Scaladoc comment -> plain text (wiki markup, tags and code blocks removed)."""
    text = _strip_comment_frame(raw)
    text = re.sub(r"\{\{\{.*?\}\}\}", " ", text, flags=re.S)
    text = _drop_block_tags(text)
    text = re.sub(r"\[\[(?:[^\]\s|]+[\s|]+)?([^\]]+)\]\]", r"\1", text)
    text = re.sub(
        r"'''(.*?)'''|''(.*?)''|__(.*?)__|`([^`]*)`",
        lambda m: next(g for g in m.groups() if g is not None),
        text,
    )
    text = re.sub(r"^\s*=+\s*(.*?)\s*=+\s*$", r"\1", text, flags=re.M)
    text = re.sub(r"</?[A-Za-z][^>]*>", " ", text)
    return _collapse(html.unescape(text))


def clean_docstring(raw: str) -> str:
    """Python docstring -> plain text (reST roles, literals, directives and doctests removed)."""
    text = inspect.cleandoc(raw)
    lines: list[str] = []
    in_example = False  # a doctest: its >>> lines and the expected output after them
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(">>>"):
            in_example = True
            continue
        if in_example:
            if s:
                continue
            in_example = False
        if re.match(r"^\.\. [\w-]+::", s) or re.fullmatch(r"[-=~^\"'`#*+]{3,}", s):
            continue
        lines.append(line)
    text = "\n".join(lines)
    text = re.sub(r":(?:\w+:)?\w+:`~?([^`]*)`", r"\1", text)  # :func:`foo`, :py:meth:`x`
    text = re.sub(r":(param|parameter|arg|type|keyword|kwarg|ivar|var)\s+([^:]*):", r"\2", text)
    text = re.sub(
        r":(returns?|rtype|raises?)\s*([^:]*):", lambda m: m.group(1) + " " + m.group(2), text
    )
    text = re.sub(r"``([^`]*)``|`([^`]*)`_?", lambda m: m.group(1) or m.group(2) or "", text)
    text = re.sub(r"\*\*(.*?)\*\*|\*(.*?)\*", lambda m: m.group(1) or m.group(2) or "", text)
    return _collapse(text)


def clean_doc(raw: str, language: str) -> str:
    """Dispatch on language; the raw text is the comment/docstring as written in the source."""
    if language == "python":
        return clean_docstring(raw)
    if language == "scala":
        return clean_scaladoc(raw)
    return clean_javadoc(raw)
