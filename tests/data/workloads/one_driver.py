"""Run several applications of experiments/workloads/ one after the other in one PySpark
driver: one `spark-submit`, so one JVM and one Python driver start for all of them.

    spark-submit one_driver.py SCRIPT ARGS... [--- SCRIPT ARGS...]...

Each runs as spark-submit runs it (``__main__``, its own ``sys.argv``); each makes and stops
its own session, so each is an application of its own. Before a workload's output comes a
line ``== workload NAME`` (the script's stem). A workload that fails prints its traceback;
the rest still run, and the runner then exits 1.
"""

from __future__ import annotations

import runpy
import sys
import traceback
from pathlib import Path

SEPARATOR = "---"


def main() -> None:
    groups: list[list[str]] = [[]]
    for arg in sys.argv[1:]:
        if arg == SEPARATOR:
            groups.append([])
        else:
            groups[-1].append(arg)
    failed = False
    for script, *args in (g for g in groups if g):
        print(f"== workload {Path(script).stem}", flush=True)
        sys.argv = [script, *args]
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as exc:
            failed = failed or exc.code not in (None, 0)
        except Exception:  # noqa: BLE001 - reported, and the next workload still runs
            traceback.print_exc()
            failed = True
        sys.stdout.flush()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
