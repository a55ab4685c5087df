"""The shipped resource classifier: function or frame -> resource vector.

Each function goes through the code model (binarized AST plus its qualified name), the
identifier-token head and, when it has a doc comment, the doc model; the class
distributions are averaged with the per-language weights stored with the models
(``perfmodel.embed.ensemble``; equal weights for models without them). A frame whose
source cannot be found is classified from its name's subtokens alone (the code model was
trained on such name-only trees too). Results are cached per function, because a profile
repeats the same few hundred functions across thousands of samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from perfmodel.dag.resources import ResourceVector
from perfmodel.embed import SHIPPED_MODELS
from perfmodel.embed.doc_model import DocEmbedder
from perfmodel.embed.ensemble import Weights, combine, weights_for
from perfmodel.embed.source.frames import parse_frame
from perfmodel.embed.tree_batch import TreeEncoder, collate
from perfmodel.embed.weights import ModelBundle, load_bundle

DEFAULT_BATCH = 256

Heads = tuple[np.ndarray, np.ndarray | None, np.ndarray | None]
"""Per function: code, doc (None without a doc) and token (None without the head) softmax."""


def average_heads(code: np.ndarray, doc: np.ndarray | None, token: np.ndarray | None) -> np.ndarray:
    """The heads' distributions averaged with equal weights, as the paper averages its two
    (the evaluation's reference row; the shipped combination is weighted, see
    :func:`perfmodel.embed.ensemble.combine`)."""
    heads = [h for h in (code, doc, token) if h is not None]
    return np.mean(np.stack(heads), axis=0) if len(heads) > 1 else code


# Top-level domains that begin JVM package names (``net.jpountz.lz4``, ``io.netty``) and are
# also resource words: the corpus (JDK and Python code) has ``net`` and ``io`` only as
# ``java.net`` and ``java.io``, so as a domain prefix they read as network or disk I/O
# (LZ4's JNI compressor came out 0.90 network). As a domain they say nothing.
_DOMAIN_WORDS = ("net", "io")


def model_name_tokens(qualified_name: str, tokens: Sequence[str], language: str) -> tuple[str, ...]:
    """A frame's name subtokens as the models should read them (reverse-domain word dropped)."""
    if language == "python" or not tokens or tokens[0] not in _DOMAIN_WORDS:
        return tuple(tokens)
    if qualified_name.count(".") >= 2 and qualified_name.startswith(f"{tokens[0]}."):
        return tuple(tokens[1:])
    return tuple(tokens)


@dataclass(frozen=True)
class FunctionInput:
    """What the models read about one function; ``ast`` None means no source."""

    name: str
    name_tokens: tuple[str, ...]
    language: str
    ast: list[Any] | None = None
    doc: str = ""


@dataclass(frozen=True)
class Classification:
    """Resource distribution of one frame or function, with what it was based on."""

    frame: str
    vector: dict[str, float]
    label: str
    source_found: bool
    code_vector: dict[str, float]
    doc_vector: dict[str, float] | None = None
    explain: dict[str, Any] = field(default_factory=dict)
    token_vector: dict[str, float] | None = None
    """The identifier-token head's distribution (None for models without that head)."""

    def resource_vector(self) -> ResourceVector:
        return ResourceVector.from_weights(self.vector)

    def to_dict(self, explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "frame": self.frame,
            "vector": {k: round(v, 4) for k, v in self.vector.items()},
            "label": self.label,
            "source_found": self.source_found,
        }
        if explain:
            out["code_vector"] = {k: round(v, 4) for k, v in self.code_vector.items()}
            out["doc_vector"] = (
                None
                if self.doc_vector is None
                else {k: round(v, 4) for k, v in self.doc_vector.items()}
            )
            out.update(self.explain)
        return out


class ResourceClassifier:
    """Batched inference over the trained models; one instance per process is enough.

    ``roots`` are the source roots for locating frames (None: JDK ``src.zip``, the Python
    standard library and site-packages found on this machine); the locator is created on
    the first frame that needs it.
    """

    def __init__(
        self, bundle: ModelBundle, roots: list[Any] | None = None, batch_size: int = DEFAULT_BATCH
    ) -> None:
        self.bundle = bundle
        self.batch_size = batch_size
        self._roots = roots
        self._locator: Any = None
        self._embedder: DocEmbedder | None = None
        self._encoder = TreeEncoder(bundle.types, bundle.words, bundle.max_nodes)
        self._frame_cache: dict[str, Classification] = {}
        self._function_cache: dict[tuple[str, str, int], Heads] = {}

    @property
    def classes(self) -> list[str]:
        return list(self.bundle.classes)

    def clear_caches(self) -> None:
        """Forget cached frames, functions and identifier encodings (keeps the models)."""
        self._frame_cache.clear()
        self._function_cache.clear()
        self._encoder = TreeEncoder(self.bundle.types, self.bundle.words, self.bundle.max_nodes)

    # -- models ------------------------------------------------------------------------
    def _doc_embedder(self) -> DocEmbedder | None:
        if self.bundle.doc_model is None or not self.bundle.charlms:
            return None
        if self._embedder is None:
            self._embedder = DocEmbedder.from_weights(self.bundle.charlms, glove=self.bundle.glove)
        return self._embedder

    def code_probabilities(self, items: Sequence[FunctionInput]) -> np.ndarray:
        """(n, classes) softmax of the code model."""
        b = self.bundle
        encode = self._encoder.encode
        out = np.zeros((len(items), len(b.classes)), dtype=np.float32)
        with torch.inference_mode():
            for s in range(0, len(items), self.batch_size):
                chunk = items[s : s + self.batch_size]
                trees = [encode(it.ast, it.language, it.name_tokens) for it in chunk]
                logits = b.code_model(collate(trees), reconstruct=False).logits
                out[s : s + len(chunk)] = torch.softmax(logits, dim=1).numpy()
        return out

    def doc_probabilities(self, docs: Sequence[str]) -> list[np.ndarray | None]:
        """Softmax of the doc model per doc; None where a doc is empty or no doc model.

        Each distinct doc is embedded and classified once.
        """
        embedder = self._doc_embedder()
        if embedder is None or self.bundle.doc_model is None:
            return [None] * len(docs)
        unique = list(dict.fromkeys(d for d in docs if d))
        vectors = embedder.embed(unique)
        have = [i for i, v in enumerate(vectors) if v is not None]
        probs: dict[str, np.ndarray] = {}
        with torch.inference_mode():
            for s in range(0, len(have), self.batch_size):
                idx = have[s : s + self.batch_size]
                seqs = [v for v in (vectors[i] for i in idx) if v is not None]
                p = torch.softmax(self.bundle.doc_model(seqs), dim=1).numpy()
                for i, row in zip(idx, p, strict=True):
                    probs[unique[i]] = row
        return [probs.get(d) if d else None for d in docs]

    def token_probabilities(self, items: Sequence[FunctionInput]) -> list[np.ndarray | None]:
        """Softmax of the identifier-token head; None for all when the models have none."""
        head = self.bundle.token_model
        if head is None:
            return [None] * len(items)
        from perfmodel.embed.token_model import function_text

        texts = [
            function_text(it.ast, it.language, it.name_tokens, self.bundle.max_nodes)
            for it in items
        ]
        return list(head.probabilities(texts).astype(np.float32))

    def probabilities(self, items: Sequence[FunctionInput]) -> list[Heads]:
        """Code, doc and token distributions of each function (doc None when it has none,
        token None when the models have no token head)."""
        code = self.code_probabilities(items)
        docs = self.doc_probabilities([it.doc for it in items])
        tokens = self.token_probabilities(items)
        return [(code[i], docs[i], tokens[i]) for i in range(len(items))]

    def classify(self, items: Sequence[FunctionInput]) -> list[Classification]:
        """Classify functions given directly (no source lookup, no cache)."""
        return [
            self._result(it.name, p, it.ast is not None, {}, it.language)
            for it, p in zip(items, self.probabilities(items), strict=True)
        ]

    def head_weights(self, language: str) -> Weights:
        """The (code, doc, token) weights the models were shipped with for ``language``."""
        return weights_for(self.bundle.meta.get("ensemble"), language)

    def _result(
        self,
        frame: str,
        probs: Heads,
        found: bool,
        explain: dict[str, Any],
        language: str,
    ) -> Classification:
        code, doc, token = probs
        avg = combine(code, doc, token, self.head_weights(language))
        classes = self.bundle.classes
        return Classification(
            frame=frame,
            vector={c: float(avg[i]) for i, c in enumerate(classes)},
            label=classes[int(np.argmax(avg))],
            source_found=found,
            code_vector={c: float(code[i]) for i, c in enumerate(classes)},
            doc_vector=None if doc is None else {c: float(doc[i]) for i, c in enumerate(classes)},
            explain=explain,
            token_vector=(
                None if token is None else {c: float(token[i]) for i, c in enumerate(classes)}
            ),
        )

    # -- frames ------------------------------------------------------------------------
    def locator(self) -> Any:
        if self._locator is None:
            # listing site-packages takes seconds; the locator caches listings keyed by
            # each root's path, size and mtime, so a stale cache cannot be used
            import platformdirs

            from perfmodel.embed.source.locator import SourceLocator

            cache = Path(platformdirs.user_cache_dir("perfmodel")) / "source-index"
            self._locator = SourceLocator(self._roots, cache_dir=cache)
        return self._locator

    def close(self) -> None:
        if self._locator is not None:
            self._locator.close()
            self._locator = None

    def classify_frames(self, frames: Sequence[str]) -> list[Classification]:
        """Locate each frame's source and classify it; cached per frame and per function."""
        todo = [f for f in dict.fromkeys(frames) if f not in self._frame_cache]
        located = [self.locator().locate(f) for f in todo]
        keys = [
            (loc.source_name or loc.qualified_name, loc.path or "", loc.line_start or 0)
            for loc in located
        ]
        need = [i for i, k in enumerate(keys) if k not in self._function_cache]
        unique: dict[tuple[str, str, int], int] = {}
        for i in need:
            unique.setdefault(keys[i], i)
        languages = [loc.language if loc.language != "unknown" else "java" for loc in located]
        items = [
            FunctionInput(
                name=located[i].frame,
                name_tokens=model_name_tokens(
                    located[i].qualified_name, located[i].name_tokens, languages[i]
                ),
                language=languages[i],
                ast=located[i].ast if located[i].source_found else None,
                doc=located[i].doc or "",
            )
            for i in unique.values()
        ]
        for key, probs in zip(unique, self.probabilities(items), strict=True):
            self._function_cache[key] = probs
        for f, loc, key, language in zip(todo, located, keys, languages, strict=True):
            explain = {
                "qualified_name": loc.qualified_name,
                "source_name": loc.source_name,
                "path": loc.path,
                "line": loc.line_start,
                "doc": loc.doc,
                "note": loc.note,
            }
            self._frame_cache[f] = self._result(
                f, self._function_cache[key], loc.source_found, explain, language
            )
        return [self._frame_cache[f] for f in frames]

    def frame_vectors(self, frames: Sequence[str]) -> list[dict[str, float]]:
        """Class distribution per frame (the ``FrameVectorSource`` protocol of ``aggregate``)."""
        return [c.vector for c in self.classify_frames(frames)]

    def frame_vectors_and_files(
        self, frames: Sequence[str]
    ) -> list[tuple[dict[str, float], str | None]]:
        """Each frame's class distribution and the file its code was read from: the source
        file, or the archive holding it; for a Python frame whose file could not be read, the
        file it names. A cache of the vectors (`perfmodel.embed.vector_cache`) checks that
        file to know when the code behind a vector changed."""
        return [
            (c.vector, _code_file(f, c.explain.get("path")))
            for f, c in zip(frames, self.classify_frames(frames), strict=True)
        ]

    def classify_source_file(self, path: Path) -> list[Classification]:
        """Classify every function defined in one Java, Scala or Python file."""
        from perfmodel.embed.source.extract import Extractor, function_ast
        from perfmodel.embed.source.index import parse_file
        from perfmodel.embed.source.names import name_tokens

        parsed = parse_file(Extractor(), path.name, path.read_bytes())
        items = [
            FunctionInput(
                name=fn.qualified_name,
                name_tokens=name_tokens(fn.qualified_name.replace("<locals>", "")),
                language=fn.language,
                ast=function_ast(parsed, fn)[0],
                doc=fn.doc,
            )
            for fn in parsed.functions
        ]
        results = self.classify(items)
        return [
            Classification(
                r.frame,
                r.vector,
                r.label,
                True,
                r.code_vector,
                r.doc_vector,
                {"path": str(path), "line": fn.line_start, "doc": fn.doc},
                r.token_vector,
            )
            for r, fn in zip(results, parsed.functions, strict=True)
        ]


def _code_file(frame: str, located: str | None) -> str | None:
    """The file a frame's vector depends on (see `frame_vectors_and_files`)."""
    if located:
        archive, sep, _ = located.partition("!")
        return archive if sep and Path(archive).is_file() else located
    pf = parse_frame(frame)
    return pf.file if pf.kind == "python" and pf.file and Path(pf.file).is_absolute() else None


def default_models_dir() -> Path:
    """The shipped weights: package data in ``perfmodel/embed/models``."""
    return SHIPPED_MODELS


def load_classifier(
    models_dir: Path | None = None, roots: list[Any] | None = None
) -> ResourceClassifier:
    """Load the trained classifier from ``models_dir`` (default: the shipped models).

    Raises :class:`perfmodel.embed.weights.ModelLoadError` (a ``PerfmodelError``) with a
    hint when the directory holds no usable model. ``roots`` are the source roots frames
    are looked up in (None: those found on this machine).
    """
    return ResourceClassifier(load_bundle(models_dir or default_models_dir()), roots=roots)
