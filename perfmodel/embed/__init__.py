"""Code-based resource inference: locate the source of sampled frames, learn from labeled corpora.

Subpackages: ``source`` (frame names -> code and docs), ``corpus`` (labeled training data).
"""
