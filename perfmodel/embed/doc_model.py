"""The documentation model: a GRU over Flair contextual string embeddings of doc words.

A doc comment is cleaned (by the corpus/locator), tokenized into words, embedded with
our local Flair character LMs (forward and backward stacked) and read by a GRU; its last
state is the doc embedding and a one-layer head turns it into resource logits. Flair's
character LMs need no word vocabulary, so words never seen in training (new APIs,
misspellings) still get meaningful vectors.

The LMs are frozen: word vectors are computed once per doc (``DocEmbedder``) and the GRU
trains on those, which is what makes training on two cores affordable. Flair trains the
LMs (`perfmodel.embed.charlm`); running them needs only torch (``DocEmbedder.from_weights``),
since importing Flair costs seconds of every process that classifies code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence

from perfmodel.embed.charlm import CharLMSpec
from perfmodel.embed.word_embeddings import glove_vectors, import_flair_offline

if TYPE_CHECKING:
    from flair.embeddings import StackedEmbeddings

MAX_DOC_WORDS = 48
_WORD = re.compile(r"[A-Za-z0-9_]+|[^\sA-Za-z0-9_]")


def doc_words(doc: str, max_words: int = MAX_DOC_WORDS) -> list[str]:
    """Words and punctuation of a cleaned doc, truncated: the opening sentences say what a
    function does; long tails are parameter minutiae and cost char-LM time."""
    return _WORD.findall(doc)[:max_words]


class DocEmbedder:
    """Doc text -> (words, dim) tensor of Flair embeddings; batches docs by length.

    The embeddings are exactly Flair's (same LMs, same character offsets, same GloVe
    lookup, stacked in Flair's order), but computed without Flair: the character LMs run
    directly on padded index tensors and the word vectors are gathered with one indexing
    operation per batch, with no per-``Sentence`` or per-``Token`` Python objects. That is
    most of the doc model's inference cost (see ``benchmarks/classify_speed.py``).

    Built from stored weights (:meth:`from_weights`, what classifying and training use) it
    never imports Flair. Built from a Flair stack (:meth:`from_flair`) it reads that stack's
    parts; a stack with an embedding type or option this does not reproduce goes through
    Flair itself (:meth:`embed_with_flair`), which is also the reference the tests compare
    against.
    """

    def __init__(
        self,
        parts: list[_CharLMPart | _WordPart] | None,
        batch_size: int = 128,
        max_batch_chars: int = 2**17,
        flair_stack: StackedEmbeddings | None = None,
    ) -> None:
        if parts is None and flair_stack is None:
            raise ValueError("a DocEmbedder needs its parts or a Flair stack")
        self.flair_stack = flair_stack
        self.batch_size = batch_size
        self.max_batch_chars = max_batch_chars
        self._parts = parts

    @classmethod
    def from_weights(
        cls,
        charlms: Sequence[tuple[CharLMSpec, dict[str, torch.Tensor]]],
        glove: bool = False,
        batch_size: int = 128,
        max_batch_chars: int = 2**17,
    ) -> DocEmbedder:
        """The embedder of stored character LMs (and GloVe), as `perfmodel.embed.word_embeddings.
        flair_embedder` stacks them, without Flair."""
        parts: list[_CharLMPart | _WordPart] = [_CharLMPart.of_weights(s, w) for s, w in charlms]
        if glove:
            words, matrix = glove_vectors()
            parts.append(_WordPart("glove", {w: i for i, w in enumerate(words)}, matrix))
        for i, part in enumerate(parts):  # as Flair's StackedEmbeddings renames its parts
            part.name = f"{i}-{part.name}"
        return cls(parts, batch_size, max_batch_chars)

    @classmethod
    def from_flair(
        cls, embeddings: StackedEmbeddings, batch_size: int = 128, max_batch_chars: int = 2**17
    ) -> DocEmbedder:
        """The embedder of a Flair stack (tests, the reference script)."""
        return cls(_direct_parts(embeddings), batch_size, max_batch_chars, flair_stack=embeddings)

    @property
    def dim(self) -> int:
        if self._parts is None:
            assert self.flair_stack is not None
            return int(self.flair_stack.embedding_length)
        return sum(p.dim for p in self._parts)

    @property
    def direct(self) -> bool:
        """Whether :meth:`embed` bypasses Flair's Sentence objects (see the class docstring)."""
        return self._parts is not None

    def embed(self, docs: Sequence[str]) -> list[torch.Tensor | None]:
        """One tensor per doc, None for docs with no words.

        Docs with the same words share one computation (and one result tensor). The
        tensors are ordinary ones (no_grad, not inference mode), so training can use them.
        """
        if self._parts is None:
            return self.embed_with_flair(docs)
        words = [tuple(doc_words(d)) for d in docs]
        unique = list(dict.fromkeys(w for w in words if w))
        vectors: dict[tuple[str, ...], torch.Tensor] = {}
        with torch.no_grad():
            for batch in self._batches([list(w) for w in unique]):
                for w, v in zip(batch, self._embed_batch(batch), strict=True):
                    vectors[tuple(w)] = v
        return [vectors[w] if w else None for w in words]

    def _batches(self, words: list[list[str]]) -> list[list[list[str]]]:
        """Docs sorted by character count, cut into batches of at most ``batch_size`` docs
        and ``max_batch_chars`` padded characters (the LMs run over padded characters, so
        similar lengths in one batch waste little work; results do not depend on it)."""
        ordered = sorted(words, key=_text_length)
        out: list[list[list[str]]] = []
        cur: list[list[str]] = []
        for w in ordered:
            if cur and (
                len(cur) >= self.batch_size
                or (len(cur) + 1) * (_text_length(w) + 2) > self.max_batch_chars
            ):
                out.append(cur)
                cur = []
            cur.append(w)
        if cur:
            out.append(cur)
        return out

    def _embed_batch(self, words: list[list[str]]) -> list[torch.Tensor]:
        assert self._parts is not None
        flat = [t for w in words for t in w]
        counts = [len(w) for w in words]
        tok_len = np.fromiter(map(len, flat), dtype=np.int64, count=len(flat))
        tok_doc = np.repeat(np.arange(len(words)), counts)
        doc_first = np.concatenate([[0], np.cumsum(counts)[:-1]])
        tok_idx = np.arange(len(flat)) - doc_first[tok_doc]
        # characters up to and including each token, within its doc
        ends = np.cumsum(tok_len)
        before_doc = np.concatenate([[0], ends])[doc_first]
        through = ends - before_doc[tok_doc]
        geometry = _Geometry(
            texts=[" ".join(w) for w in words],
            tok_doc=torch.from_numpy(tok_doc),
            # offsets Flair reads the LM states at (FlairEmbeddings._add_embeddings_internal)
            after=torch.from_numpy(through + tok_idx),  # forward: after the token
            start=torch.from_numpy(through - tok_len + tok_idx),  # backward: its first char
        )
        named = {p.name: p.embed(geometry, flat) for p in self._parts}
        stacked = torch.cat([named[k] for k in sorted(named)], dim=1)  # Token.embedding order
        return list(torch.split(stacked, counts))

    def embed_with_flair(self, docs: Sequence[str]) -> list[torch.Tensor | None]:
        """The same embeddings through Flair's ``Sentence`` API (slow; the reference)."""
        if self.flair_stack is None:
            raise ValueError("this embedder was built from weights: it has no Flair stack")
        import_flair_offline()
        from flair.data import Sentence

        words = [doc_words(d) for d in docs]
        out: list[torch.Tensor | None] = [None] * len(docs)
        order = sorted((i for i, w in enumerate(words) if w), key=lambda i: _text_length(words[i]))
        with torch.no_grad():
            for s in range(0, len(order), self.batch_size):
                idx = order[s : s + self.batch_size]
                sentences = [Sentence(words[i]) for i in idx]
                self.flair_stack.embed(sentences)
                for i, sent in zip(idx, sentences, strict=True):
                    out[i] = torch.stack([tok.embedding for tok in sent]).detach().clone()
                    sent.clear_embeddings()
        return out


def _text_length(words: Sequence[str]) -> int:
    return sum(len(t) + 1 for t in words)


@dataclass(frozen=True)
class _Geometry:
    """Where each token of a batch of docs lies in its doc's text (all tokens flattened)."""

    texts: list[str]  # words joined by single spaces, as Flair's plain string of a Sentence
    tok_doc: torch.Tensor  # (N,) doc of each token
    after: torch.Tensor  # (N,) offset of the character after each token in its text
    start: torch.Tensor  # (N,) offset of each token's first character in its text


class _CharLMPart:
    """One ``FlairEmbeddings`` (not lower-casing): its LM's encoder and LSTM run on padded
    character indices, as Flair's ``LanguageModel.forward`` in evaluation (dropout off, no
    projection). Stored LMs take ``FlairEmbeddings``' default: the hidden state after the
    whitespace that follows a word."""

    def __init__(
        self,
        name: str,
        forward: bool,
        index: dict[str, int],
        encoder: nn.Embedding,
        rnn: nn.LSTM,
        with_whitespace: bool = True,
    ) -> None:
        self.name = name
        self.forward = forward
        self.index = index  # character -> row; unknown characters -> 0 (Flair's <unk>)
        self.pad = index.get(" ", 0)
        self.encoder = encoder
        self.rnn = rnn
        self.start_marker = "\n"  # the LMs' document delimiter (charlm.build_language_model)
        self.end_marker = " "
        self.with_whitespace = with_whitespace

    @property
    def dim(self) -> int:
        return int(self.rnn.hidden_size)

    @classmethod
    def of_weights(cls, spec: CharLMSpec, state: dict[str, torch.Tensor]) -> _CharLMPart:
        """The LM of stored weights; named as Flair names an LM passed as an object."""
        encoder = nn.Embedding(len(spec.chars) + 1, spec.embedding_size)
        rnn = nn.LSTM(spec.embedding_size, spec.hidden_size, spec.nlayers)
        encoder.load_state_dict({"weight": state["encoder.weight"]})
        rnn.load_state_dict({k[4:]: v for k, v in state.items() if k.startswith("rnn.")})
        encoder.eval()
        rnn.eval()
        # Flair's Dictionary(add_unk=True): <unk> is row 0, the characters follow in order.
        index = {"<unk>": 0, **{c: i + 1 for i, c in enumerate(spec.chars)}}
        name = f"Task-LSTM-{spec.hidden_size}-{spec.nlayers}-{spec.is_forward}"
        return cls(name, spec.is_forward, index, encoder, rnn)

    @classmethod
    def of_flair(cls, emb: Any) -> _CharLMPart | None:
        """The part of a ``FlairEmbeddings``, or None for an option this does not reproduce."""
        lm = emb.lm
        supported = (
            not emb.is_lower
            and lm.proj is None
            and isinstance(lm.rnn, nn.LSTM)
            and lm.__dict__.get("document_delimiter", "\n") == "\n"
        )
        if not supported:
            return None
        index = {k.decode("utf-8"): int(v) for k, v in lm.dictionary.item2idx.items()}
        forward = bool(emb.is_forward_lm)
        return cls(emb.name, forward, index, lm.encoder, lm.rnn, bool(emb.with_whitespace))

    def embed(self, g: _Geometry, flat: list[str]) -> torch.Tensor:
        strings = [
            self.start_marker + (t if self.forward else t[::-1]) + self.end_marker for t in g.texts
        ]
        longest = max(map(len, strings))
        chars = np.full((longest, len(strings)), self.pad, dtype=np.int64)
        index = self.index
        for b, s in enumerate(strings):
            chars[: len(s), b] = [index.get(c, 0) for c in s]
        states, _ = self.rnn(self.encoder(torch.from_numpy(chars)))
        m = len(self.start_marker)
        if self.forward:
            at = g.after + m
        else:
            lengths = torch.tensor([len(t) for t in g.texts])
            at = lengths[g.tok_doc] + m - g.start
        if not self.with_whitespace:
            at = at - 1
        return states[at, g.tok_doc]


_DIGIT = re.compile(r"\d")


class _WordPart:
    """One ``WordEmbeddings`` (GloVe): Flair's word -> row lookup, then one gather."""

    def __init__(self, name: str, vocab: dict[str, int], weights: np.ndarray | torch.Tensor):
        self.name = name
        self.vocab = vocab
        rows = torch.as_tensor(np.asarray(weights, dtype=np.float32))
        if rows.shape[0] == len(vocab):  # a row of zeros for unknown words, as Flair adds
            rows = torch.cat([rows, torch.zeros(1, rows.shape[1])])
        self.weights = rows

    @property
    def dim(self) -> int:
        return int(self.weights.shape[1])

    @classmethod
    def of_flair(cls, emb: Any) -> _WordPart | None:
        if emb.field is not None or emb.layer_norm is not None:
            return None
        return cls(emb.name, dict(emb.vocab), emb.embedding.weight.detach())

    def row(self, word: str) -> int:
        """As Flair's ``WordEmbeddings.get_cached_token_index``: the word, lower-cased, with
        digits as ``#``, with digits as ``0``; else the unknown row."""
        vocab = self.vocab
        lower = word.lower()
        for key in (word, lower, _DIGIT.sub("#", lower), _DIGIT.sub("0", lower)):
            if key in vocab:
                return vocab[key]
        return len(vocab)

    def embed(self, g: _Geometry, flat: list[str]) -> torch.Tensor:
        rows = torch.tensor([self.row(w) for w in flat], dtype=torch.long)
        return self.weights[rows]


def _direct_parts(embeddings: Any) -> list[_CharLMPart | _WordPart] | None:
    """The stack's parts if :class:`DocEmbedder` can reproduce every one of them exactly."""
    import_flair_offline()
    from flair.embeddings import FlairEmbeddings, StackedEmbeddings, WordEmbeddings

    stack = embeddings.embeddings if isinstance(embeddings, StackedEmbeddings) else [embeddings]
    parts: list[_CharLMPart | _WordPart] = []
    for emb in stack:
        part: _CharLMPart | _WordPart | None = None
        if type(emb) is FlairEmbeddings:
            part = _CharLMPart.of_flair(emb)
        elif type(emb) is WordEmbeddings:
            part = _WordPart.of_flair(emb)
        if part is None:
            return None
        parts.append(part)
    if len({p.name for p in parts}) != len(parts):
        return None
    return parts


@dataclass(frozen=True)
class DocModelConfig:
    input_dim: int
    n_classes: int
    hidden: int = 128

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class DocGRU(nn.Module):
    """GRU over word vectors; last hidden state -> resource logits."""

    def __init__(self, config: DocModelConfig) -> None:
        super().__init__()
        self.config = config
        self.dropout = nn.Dropout(0.2)
        self.gru = nn.GRU(config.input_dim, config.hidden, batch_first=True)
        self.head = nn.Linear(config.hidden, config.n_classes)

    def embed(self, docs: Sequence[torch.Tensor]) -> torch.Tensor:
        lengths = torch.tensor([d.shape[0] for d in docs])
        padded = self.dropout(pad_sequence(list(docs), batch_first=True))
        packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
        _, last = self.gru(packed)
        return last[-1]

    def forward(self, docs: Sequence[torch.Tensor]) -> torch.Tensor:
        return self.head(self.embed(docs))
