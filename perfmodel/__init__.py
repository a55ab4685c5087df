"""perfmodel: why a Spark job is slow and what other resources would do to it."""

__version__ = "0.1.0"
