"""Labeled code corpora: manifests, extraction, dedup, by-package split, dataset and stats.

Consumers read a built corpus with ``read_corpus(path) -> list[CorpusRecord]``; the label
set is ``sorted({r.label for r in records})`` (or ``build.json``'s ``labels``).
"""

from perfmodel.embed.corpus.builder import BuildConfig, BuildError, BuildResult, build_corpus
from perfmodel.embed.corpus.dataset import SCHEMA_VERSION, CorpusRecord, read_corpus, write_corpus
from perfmodel.embed.corpus.manifest import (
    Labeler,
    LabelSet,
    Manifest,
    ManifestError,
    load_labels,
    load_manifest,
    load_manifests,
)
from perfmodel.embed.corpus.split import SplitDefinition, load_split

__all__ = [
    "SCHEMA_VERSION",
    "BuildConfig",
    "BuildError",
    "BuildResult",
    "CorpusRecord",
    "LabelSet",
    "Labeler",
    "Manifest",
    "ManifestError",
    "SplitDefinition",
    "build_corpus",
    "load_labels",
    "load_manifest",
    "load_manifests",
    "load_split",
    "read_corpus",
    "write_corpus",
]
