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


def test_help_is_rendered_without_the_rich_formatter() -> None:
    """`perfmodel --help` answers with click's plain formatter: typer's rich one imports
    markdown-it, pygments and attrs (half the start-up), and the console is a command's."""
    code = (
        "import sys\n"
        "from perfmodel.cli import main\n"
        "sys.argv = ['perfmodel', '--help']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "rich = ('typer.rich_utils', 'markdown_it', 'pygments', 'rich.console')\n"
        "print(' '.join(m for m in rich if m in sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "Usage: perfmodel" in done.stdout and "diagnose" in done.stdout
    assert done.stderr.strip() == "", f"imported to print the help: {done.stderr.strip()}"
