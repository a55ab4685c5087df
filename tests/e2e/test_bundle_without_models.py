"""A bundle read where the [models] extra is not installed: the analysis runs without code
vectors and says which extra would add them (as it does when the models are missing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HIDDEN = ["torch", "flair", "safetensors"]


@pytest.mark.slow
def test_diagnose_of_a_bundle_without_the_models_extra(job_bundle: Path, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        f"for name in {HIDDEN!r}:\n"
        "    sys.modules[name] = None\n"
        "from perfmodel.cli import main\n"
        f"sys.argv = ['perfmodel', 'diagnose', {str(job_bundle)!r}, '--json']\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    said = [w for w in result["warnings"] if "[models]" in w]
    assert said and "pip install 'perfmodel[models]'" in said[0], result["warnings"]
    assert result["stages"], "the bundle was analysed"
