"""Train and rebuild the local Flair character language models behind the doc model.

Flair's pretrained embeddings live on a hub that cannot be reached here, so we train its
character LM (Akbik et al. 2018) on the training split's doc comments: a small forward
and a backward LSTM, which give the contextual string embeddings on our own domain.
Flair saves LMs by pickling whole objects; we never load such files. Instead the
weights are stored as a plain state dict (safetensors) with a JSON config holding the
character dictionary, and the ``LanguageModel`` is rebuilt from those.
"""

from __future__ import annotations

import random
import tempfile
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from perfmodel.embed.word_embeddings import import_flair_offline

if TYPE_CHECKING:
    from flair.models import LanguageModel


@dataclass(frozen=True)
class CharLMConfig:
    """Size and training schedule of one character LM (Flair's defaults are 2048 hidden)."""

    hidden_size: int = 128
    embedding_size: int = 32
    nlayers: int = 1
    epochs: int = 2
    sequence_length: int = 120
    mini_batch_size: int = 32
    learning_rate: float = 20.0
    min_char_count: int = 3


@dataclass(frozen=True)
class CharLMSpec:
    """Everything needed to rebuild a trained LM besides its tensors (JSON-friendly)."""

    chars: list[str]
    is_forward: bool
    hidden_size: int
    embedding_size: int
    nlayers: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CharLMSpec:
        return cls(
            list(data["chars"]),
            bool(data["is_forward"]),
            int(data["hidden_size"]),
            int(data["embedding_size"]),
            int(data["nlayers"]),
        )


def _dictionary(chars: Sequence[str]) -> Any:
    import_flair_offline()
    from flair.data import Dictionary

    d = Dictionary(add_unk=True)
    for c in chars:
        d.add_item(c)
    return d


def build_language_model(
    spec: CharLMSpec, state: dict[str, torch.Tensor] | None = None
) -> LanguageModel:
    """A Flair ``LanguageModel`` of the given shape, loaded with ``state`` if given."""
    import_flair_offline()
    from flair.models import LanguageModel

    lm = LanguageModel(
        _dictionary(spec.chars),
        spec.is_forward,
        spec.hidden_size,
        spec.nlayers,
        spec.embedding_size,
        nout=None,
        document_delimiter="\n",
        dropout=0.1,
        has_decoder=state is None or "decoder.weight" in state,
    )
    if state is not None:
        lm.load_state_dict(state, strict=True)
    lm.eval()
    return lm


def train_char_lm(
    texts: Sequence[str], is_forward: bool, config: CharLMConfig, seed: int
) -> tuple[CharLMSpec, dict[str, torch.Tensor]]:
    """Train one direction on ``texts`` (one document per item); returns spec and weights.

    The decoder (next-character softmax) is dropped from the returned weights: only the
    hidden states are used as embeddings.
    """
    import_flair_offline()
    from flair.trainers.language_model_trainer import LanguageModelTrainer, TextCorpus

    docs = [" ".join(t.split()) for t in texts if t.strip()]
    counts = Counter(c for d in docs for c in d)
    chars = sorted(c for c, n in counts.items() if n >= config.min_char_count)
    spec = CharLMSpec(chars, is_forward, config.hidden_size, config.embedding_size, config.nlayers)
    random.Random(seed).shuffle(docs)
    n_valid = max(len(docs) // 20, 1)
    need = 2 * config.mini_batch_size + 2
    valid = docs[:n_valid]
    while len("\n".join(valid)) < need:  # Flair refuses a validation set under 2 batches
        valid = valid + valid
    train = docs[n_valid:] or docs
    torch.manual_seed(seed)
    random.seed(seed)  # flair shuffles its training shards with the global generator
    lm = build_language_model(spec)
    lm.train()
    with tempfile.TemporaryDirectory(prefix="perfmodel-charlm-") as tmp:
        root = Path(tmp)
        (root / "train").mkdir()
        shards = 4
        for i in range(shards):
            (root / "train" / f"train_split_{i}").write_text("\n".join(train[i::shards]) + "\n")
        (root / "valid.txt").write_text("\n".join(valid) + "\n")
        (root / "test.txt").write_text("\n".join(valid) + "\n")
        corpus = TextCorpus(root, lm.dictionary, is_forward, character_level=True)
        trainer = LanguageModelTrainer(lm, corpus)
        with warnings.catch_warnings():
            # flair builds a CUDA GradScaler (disabled on CPU) through a deprecated alias
            warnings.simplefilter("ignore", FutureWarning)
            trainer.train(
                root / "out",
                sequence_length=config.sequence_length,
                mini_batch_size=config.mini_batch_size,
                max_epochs=config.epochs,
                learning_rate=config.learning_rate,
                num_workers=0,
                checkpoint=False,
            )
    lm.eval()
    state = {
        k: v.detach().clone().contiguous()
        for k, v in lm.state_dict().items()
        if not k.startswith("decoder.")
    }
    return spec, state
