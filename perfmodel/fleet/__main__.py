"""Entry point for ``spark-submit``, which runs a Python file, not a console script:

    spark-submit --master yarn --py-files perfmodel.zip \\
        "$(python -c 'import perfmodel.fleet.__main__ as m; print(m.__file__)')" \\
        hdfs:///spark-history --out fleet --engine spark --spark-staging hdfs:///tmp/pf

The arguments are those of ``perfmodel fleet``; the session is spark-submit's.
"""

from __future__ import annotations

import sys
from pathlib import Path

# spark-submit puts this file's folder first on sys.path, where the package's modules
# would shadow standard ones; the package is imported by its full name instead.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if p and Path(p).resolve() != _HERE]


def main() -> None:
    from perfmodel.cli import build_app

    build_app()(["fleet", *sys.argv[1:]], prog_name="perfmodel")


if __name__ == "__main__":
    main()
