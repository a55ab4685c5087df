"""``python -m perfmodel``, and the file ``spark-submit`` runs (it runs a Python file, not a
console script):

    spark-submit --master yarn --archives pm.tar.gz#environment \\
        "$(python -c 'import perfmodel.__main__ as m; print(m.__file__)')" \\
        fleet hdfs:///spark-history --out fleet --engine spark --spark-staging hdfs:///tmp/pf

The arguments are those of ``perfmodel``; with ``fleet --engine spark`` the session is
spark-submit's.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a file, this file's folder comes first on sys.path, where the package's modules
# (``profile``) would shadow standard ones; the package is imported by its full name instead.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if p and Path(p).resolve() != _HERE]


def main() -> None:
    from perfmodel.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
