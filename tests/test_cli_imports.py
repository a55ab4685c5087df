"""Building the CLI must not import the analysis stack: `perfmodel record` starts the user's
job only after the CLI is built, and `--help` should answer at once. The what-if grammar
(`perfmodel.simulate.whatif`, whose settings name the options) is all of the model it reads."""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "numpy",
    "pyarrow",
    "networkx",
    "pandas",
    "torch",
    "tree_sitter",
    "perfmodel.analysis",
    "perfmodel.report",
    "perfmodel.simulate.replay",
    "perfmodel.simulate.workload",
)


def test_building_the_cli_leaves_the_analysis_stack_unimported() -> None:
    code = (
        "import sys\n"
        "from perfmodel.cli import build_app\n"
        "build_app()\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "", f"imported while building the CLI: {out}"
