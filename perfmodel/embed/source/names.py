"""Split identifiers into lower-case subtokens.

Both the corpus (identifier leaves of the AST) and the locator (frames without source)
describe code by the words in its names, so they must split names the same way; this
module is that single definition.
"""

from __future__ import annotations

import re

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_HEX_HASH = re.compile(r"^(0x)?[0-9a-f]{6,}$")

# Words that only exist because of compiler or runtime name mangling; they say nothing
# about what the code does, so frames without source must not be described by them.
MANGLING_WORDS = frozenset({"anonfun", "adapted", "lambda", "anon", "init", "clinit", "module"})


def split_identifier(name: str, *, keep_digits: bool = False) -> list[str]:
    """Split ``readBytes``, ``recv_into``, ``HTTPServer`` or ``java.io.File`` into subtokens.

    Tokens are lower-cased. Pure digits are dropped unless ``keep_digits`` because in
    identifiers they are mostly counters (``$anonfun$map$2``) rather than meaning.
    """
    tokens: list[str] = []
    for chunk in re.split(r"[^A-Za-z0-9]+", name):
        for tok in _CAMEL.findall(chunk):
            if tok.isdigit() and not keep_digits:
                continue
            tokens.append(tok.lower())
    return tokens


def name_tokens(qualified_name: str) -> tuple[str, ...]:
    """Subtokens of a frame's qualified name, without mangling noise or hidden-class hashes."""
    out: list[str] = []
    qualified_name = qualified_name.replace("<locals>", "")
    for chunk in re.split(r"[.$/\s<>()\[\],;:]+", qualified_name):
        if not chunk or _HEX_HASH.match(chunk.lower()):
            continue
        out.extend(t for t in split_identifier(chunk) if t not in MANGLING_WORDS)
    return tuple(out)
