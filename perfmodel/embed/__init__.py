"""Code-based resource inference: locate the source of sampled frames, learn from labeled corpora.

Subpackages: ``source`` (frame names -> code and docs), ``corpus`` (labeled training data).
The trained weights ship with the package, in ``models/`` beside this file (with their model
card, ``models/README.md``).
"""

from pathlib import Path

SHIPPED_MODELS = Path(__file__).resolve().parent / "models"
"""The shipped, trained resource models (package data): what `perfmodel train` replaces by
default and what the classifier loads unless told otherwise."""
CONFIG_FILE = "config.json"
"""The models' configuration in a model directory; a directory without it holds no model."""
