"""The version of perfmodel: one place, read by the package, the CLI and the build."""

__version__ = "0.1.0"
