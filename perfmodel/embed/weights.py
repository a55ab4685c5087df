"""Save and load the trained models without unpickling anything.

A model directory holds tensors in safetensors files (which can only contain tensors)
and everything else — class list, vocabularies, character dictionaries, layer sizes,
training configuration and held-out metrics — in ``config.json``. Loading rebuilds the
modules from the config and fills them with the tensors, so a tampered or foreign model
directory can at worst fail to load; it can never run code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from perfmodel.atomic import make_output_dir, replacing, write_atomically
from perfmodel.embed import CONFIG_FILE
from perfmodel.embed.charlm import CharLMSpec, build_language_model
from perfmodel.embed.code_model import CodeModelConfig, RecursiveAutoencoder
from perfmodel.embed.doc_model import DocGRU, DocModelConfig
from perfmodel.embed.token_model import TOKEN_FILE, TokenModel
from perfmodel.embed.vocab import Vocab
from perfmodel.errors import PerfmodelError

FORMAT_VERSION = 1
CODE_FILE = "code_model.safetensors"
DOC_FILE = "doc_model.safetensors"


class ModelLoadError(PerfmodelError):
    """The model directory is missing, incomplete or from an incompatible version."""


@dataclass
class ModelBundle:
    """Everything inference needs, in memory."""

    classes: list[str]
    types: Vocab
    words: Vocab
    code_model: RecursiveAutoencoder
    doc_model: DocGRU | None
    charlms: list[tuple[CharLMSpec, dict[str, torch.Tensor]]]
    max_nodes: int
    glove: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    token_model: TokenModel | None = None
    """The identifier-token head (absent in models trained before it existed)."""


def _charlm_file(i: int) -> str:
    return f"charlm_{i}.safetensors"


def save_bundle(bundle: ModelBundle, out_dir: Path) -> None:
    """Write ``bundle`` to ``out_dir`` (created if needed; existing regular files replaced,
    anything else refused: `perfmodel.atomic`)."""
    make_output_dir(out_dir)

    def save(tensors: dict[str, torch.Tensor], name: str) -> None:
        with replacing(out_dir / name) as tmp:
            save_file(tensors, str(tmp))

    save(_contiguous(bundle.code_model.state_dict()), CODE_FILE)
    if bundle.doc_model is not None:
        save(_contiguous(bundle.doc_model.state_dict()), DOC_FILE)
    for i, (_, state) in enumerate(bundle.charlms):
        save(_contiguous(state), _charlm_file(i))
    if bundle.token_model is not None:
        save({k: torch.from_numpy(v) for k, v in bundle.token_model.tensors().items()}, TOKEN_FILE)
    config = {
        "format_version": FORMAT_VERSION,
        "classes": bundle.classes,
        "max_nodes": bundle.max_nodes,
        "glove": bundle.glove,
        "code_model": bundle.code_model.config.to_dict(),
        "doc_model": bundle.doc_model.config.to_dict() if bundle.doc_model is not None else None,
        "charlms": [spec.to_dict() for spec, _ in bundle.charlms],
        "types": list(bundle.types.tokens),
        "words": list(bundle.words.tokens),
        **bundle.meta,
    }
    if bundle.token_model is not None:
        config["token_model"] = {
            **bundle.meta.get("token_model", {}),
            "vocab": list(bundle.token_model.vocab),
            "char_ngrams": bundle.token_model.char_ngrams,
        }
    write_atomically(out_dir / CONFIG_FILE, json.dumps(config, indent=1, ensure_ascii=False) + "\n")


def _contiguous(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v.detach().contiguous().clone() for k, v in state.items()}


def load_bundle(model_dir: Path) -> ModelBundle:
    """Rebuild the models stored in ``model_dir`` (see the module docstring)."""
    cfg_path = model_dir / CONFIG_FILE
    if not cfg_path.is_file():
        raise ModelLoadError(
            f"no trained model in {model_dir} (missing {CONFIG_FILE}); "
            "train one with `perfmodel train corpora/build/v1`"
        )
    try:
        config = json.loads(cfg_path.read_text())
    except ValueError as e:
        raise ModelLoadError(f"{cfg_path} is not valid JSON ({e}); retrain the model") from e
    if config.get("format_version") != FORMAT_VERSION:
        raise ModelLoadError(
            f"{model_dir}: model format {config.get('format_version')!r}, this perfmodel reads "
            f"{FORMAT_VERSION}; retrain with `perfmodel train`"
        )
    try:
        code = RecursiveAutoencoder(CodeModelConfig(**config["code_model"]))
        code.load_state_dict(load_file(str(model_dir / CODE_FILE)))
        code.eval()
        doc: DocGRU | None = None
        if config.get("doc_model"):
            doc = DocGRU(DocModelConfig(**config["doc_model"]))
            doc.load_state_dict(load_file(str(model_dir / DOC_FILE)))
            doc.eval()
        charlms = [
            (CharLMSpec.from_dict(spec), load_file(str(model_dir / _charlm_file(i))))
            for i, spec in enumerate(config.get("charlms", []))
        ]
        token: TokenModel | None = None
        if config.get("token_model"):
            tensors = {k: v.numpy() for k, v in load_file(str(model_dir / TOKEN_FILE)).items()}
            head = config["token_model"]
            token = TokenModel.from_tensors(head["vocab"], tensors, head.get("char_ngrams"))
    except (OSError, KeyError, RuntimeError, TypeError) as e:
        raise ModelLoadError(
            f"{model_dir}: incomplete or inconsistent model files ({e}); "
            "retrain with `perfmodel train`"
        ) from e
    known = {
        "format_version",
        "classes",
        "max_nodes",
        "code_model",
        "doc_model",
        "charlms",
        "types",
        "words",
        "token_model",
    }
    return ModelBundle(
        classes=list(config["classes"]),
        types=Vocab(tuple(config["types"])),
        words=Vocab(tuple(config["words"])),
        code_model=code,
        doc_model=doc,
        charlms=charlms,
        max_nodes=int(config["max_nodes"]),
        glove=bool(config.get("glove", False)),
        meta={k: v for k, v in config.items() if k not in known},
        token_model=token,
    )


def rebuild_charlms(bundle: ModelBundle) -> list[Any]:
    """Flair ``LanguageModel``s from the stored specs and weights."""
    return [build_language_model(spec, state) for spec, state in bundle.charlms]
