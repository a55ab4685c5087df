"""Test package for perfmodel's corpus extraction (written for the tests)."""
