#!/usr/bin/env bash
# The light install, checked as a user gets it (`make wheel-check`, run by `make test`):
#   1. build the wheel (python -m build, with the project venv's build requirements) and check
#      that it holds the plugin jar, plotly.js, the trained models and the C placement loop;
#   2. install it with no extras into a clean venv (versions constrained by the lock);
#   3. there: --version, `diagnose`, `report` and `fleet` on the bundled example, the C extension, and
#      one `error:` line naming the extra for each command that needs one (a recorded bundle,
#      an s3:// source, fleet, Spark, the models, recording);
#   4. in the project venv, where every extra is installed: `diagnose` and `report` import none
#      of torch, pyspark, flair (reading a log stays light even where they are present).
# Prints the wheel's size, the install's size and `perfmodel --help`'s start-up time against
# their targets (150 MB, 0.3 s); fails when the install is 150 MB or more. Network: the
# package registry only (step 2).
#
#   VENV_PYTHON  the project venv's python (default .venv/bin/python)
#   BASE_PYTHON  the interpreter the clean venv is made from (default python3.11)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV_PYTHON=${VENV_PYTHON:-.venv/bin/python}
BASE_PYTHON=${BASE_PYTHON:-python3.11}
EXAMPLE="$PWD/examples/eventlogs/etl-local2.zstd"
HEAVY="torch pyspark flair"
# Not installed without extras either: pyarrow (bundles, object stores).
EXTRA_ONLY="pyarrow networkx"
INSTALL_TARGET_MB=150 # fails at or beyond it (issue 43's target for the light install)

work="$(mktemp -d "${TMPDIR:-/tmp}/perfmodel-wheel.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# What diagnose remembers (the last profile) and any cache stay in the scratch directory.
export XDG_STATE_HOME="$work/state" XDG_DATA_HOME="$work/data" XDG_CACHE_HOME="$work/cache"
fail() {
  echo "check_wheel: FAIL: $*" >&2
  exit 1
}

# 1. The wheel and what it must carry. setuptools stages the package in build/lib and keeps
# what it put there before: a file since deleted from the tree would still be in the wheel.
rm -rf build/lib build/lib.* build/bdist.*
if ! "$VENV_PYTHON" -m build --wheel --no-isolation --outdir "$work/dist" . >"$work/build.log" 2>&1; then
  cat "$work/build.log" >&2
  fail "python -m build failed"
fi
wheels=("$work"/dist/perfmodel-*.whl)
wheel="${wheels[0]}"
"$VENV_PYTHON" - "$wheel" <<'EOF' || fail "the wheel lacks package data (above)"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = {
    "the plugin jar": lambda n: n == "perfmodel/profile/perfmodel-plugin.jar",
    "plotly.js": lambda n: n == "perfmodel/report/html/assets/plotly-basic.min.js",
    "the models' config": lambda n: n == "perfmodel/embed/models/config.json",
    "the code model": lambda n: n == "perfmodel/embed/models/code_model.safetensors",
    "the C placement loop": lambda n: n.startswith("perfmodel/simulate/_placement.") and n.endswith(".so"),
}
missing = [what for what, match in need.items() if not any(match(n) for n in names)]
for what in missing:
    print(f"check_wheel: missing from the wheel: {what}", file=sys.stderr)
sys.exit(1 if missing else 0)
EOF
wheel_kb=$(du -k "$wheel" | cut -f1)

# 2. A clean venv, the wheel without extras. The project venv's pip installs into it
# (`pip --python`): a venv's own pip would cost 4 s to set up (ensurepip) and be the older
# one bundled with the interpreter.
"$BASE_PYTHON" -m venv --without-pip "$work/venv"
site="$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
before_kb=$(du -sk "$site" | cut -f1)
"$VENV_PYTHON" -m pip --python "$work/venv/bin/python" install --quiet \
  --disable-pip-version-check -c requirements.lock "$wheel" >"$work/pip.log" 2>&1 || {
  cat "$work/pip.log" >&2
  fail "pip install of the wheel failed"
}
after_kb=$(du -sk "$site" | cut -f1)
install_mb=$(((after_kb - before_kb) / 1024))
own_mb=$(($(du -sk "$site/perfmodel" | cut -f1) / 1024))
pm="$work/venv/bin/perfmodel"
py="$work/venv/bin/python"

# 3. The light install works, and says which extra a heavier command needs.
"$py" - <<EOF || fail "an extra's library is installed without extras"
import importlib.util, sys
present = [m for m in "$HEAVY $EXTRA_ONLY".split() if importlib.util.find_spec(m)]
sys.exit(f"installed without extras: {present}" if present else 0)
EOF
version="$("$pm" --version)"
expected="perfmodel $("$py" -c 'from perfmodel._version import __version__ as v; print(v)')"
[[ "$version" == "$expected" ]] || fail "--version printed '$version', expected '$expected'"
(cd "$work" && "$pm" diagnose "$EXAMPLE" >diagnose.txt 2>diagnose.err) ||
  fail "diagnose failed: $(cat "$work/diagnose.err")"
grep -q "Bottleneck overall:" "$work/diagnose.txt" || fail "diagnose printed no bottleneck"
(cd "$work" && "$pm" report "$EXAMPLE" -o report.html >/dev/null 2>report.err) ||
  fail "report failed: $(cat "$work/report.err")"
grep -q "plotly" "$work/report.html" || fail "the report has no plotly.js inlined"
(cd "$work" && "$pm" fleet "$EXAMPLE" --out fleet-light --json >fleet.json 2>fleet.err) ||
  fail "fleet failed: $(cat "$work/fleet.err")"
"$py" - "$work/fleet-light" <<'EOF' || fail "fleet's tables are not what it wrote"
import sys
from pathlib import Path
from arro3.io import read_parquet
apps = read_parquet(str(Path(sys.argv[1]) / "apps.parquet")).read_all()
sys.exit(0 if apps.num_rows == 1 and apps.column("app_id").to_pylist()[0] else "no application row")
EOF
"$py" -c 'import perfmodel.simulate._placement' || fail "the C placement loop does not import"
expect_extra() { # extra, command...
  local extra="$1"
  shift
  local status=0
  # PATH without the user's tools: a py-spy installed elsewhere is not the wheel's extra.
  (cd "$work" && PATH="$work/venv/bin:/usr/bin:/bin" "$pm" "$@" >extra.out 2>extra.err) || status=$?
  [[ $status -eq 2 ]] || fail "'perfmodel $*' exited $status, expected 2: $(cat "$work/extra.err")"
  [[ $(wc -l <"$work/extra.err") -eq 1 ]] || fail "'perfmodel $*' printed more than one line: $(cat "$work/extra.err")"
  grep -q "^error: .*pip install 'perfmodel\[$extra\]'" "$work/extra.err" ||
    fail "'perfmodel $*' does not name [$extra]: $(cat "$work/extra.err")"
}
# A recorded bundle (made by the project venv, where [bundles] is installed) and an s3://
# source: one line naming the extra, before any reading.
"$VENV_PYTHON" -m perfmodel profile "$EXAMPLE" --out "$work/bundle" 2>"$work/profile.err" ||
  fail "perfmodel profile in the project venv failed: $(cat "$work/profile.err")"
expect_extra bundles diagnose "$work/bundle"
expect_extra remote diagnose s3://perfmodel-check/eventlogs/app-1
expect_extra models classify java.io.FileInputStream.readBytes
expect_extra spark fleet "$EXAMPLE" --out fleet --engine spark
expect_extra record record --out bundle -- python -c pass

# 4. Where every extra is installed, reading a log still imports none of the heavy ones.
for command in diagnose report; do
  args=("$command" "$EXAMPLE")
  [[ $command == report ]] && args+=(-o "$work/report-dev.html")
  "$VENV_PYTHON" - "$HEAVY" "${args[@]}" <<'EOF' >/dev/null 2>"$work/heavy.err" ||
import sys
heavy = sys.argv[1].split()
sys.argv = ["perfmodel", *sys.argv[2:]]
from perfmodel.cli import main
try:
    main()
except SystemExit as exc:
    if exc.code:
        raise
imported = [m for m in heavy if m in sys.modules]
if imported:
    sys.exit(f"{sys.argv[1]} imported {imported}")
EOF
    fail "$command in the project venv: $(tail -n 5 "$work/heavy.err")"
done

# Figures: sizes and `perfmodel --help` start-up (median of 7 runs: wall clock, and the CPU
# time it took, which a busy machine inflates less).
help_figures="$("$py" - "$pm" <<'EOF'
import resource, statistics, subprocess, sys, time
wall, cpu = [], []
for _ in range(7):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.argv[1], "--help"], stdout=subprocess.DEVNULL, check=True)
    wall.append(time.perf_counter() - t)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
print(f"{statistics.median(wall):.2f} {statistics.median(cpu):.2f}")
EOF
)"
read -r help_s help_cpu_s <<<"$help_figures"
load="$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')"
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v < t) ? "met" : "NOT met" }'; }
# What the install holds, largest first (the packages behind the figure below).
echo "check_wheel: largest installed packages (MB):"
(cd "$site" && du -sm -- */ 2>/dev/null | sort -rn | head -n 8 | sed 's/^/  /')
echo "check_wheel: wheel $(basename "$wheel"): $((wheel_kb / 1024)) MB"
echo "check_wheel: installed without extras: ${install_mb} MB (perfmodel ${own_mb} MB, the rest its dependencies); target 150 MB: $(verdict "$install_mb" 150)"
echo "check_wheel: perfmodel --help: ${help_s} s, ${help_cpu_s} s of CPU (median of 7, load average ${load}); target 0.3 s: $(verdict "$help_s" 0.3)"
((install_mb < INSTALL_TARGET_MB)) || fail "the install is ${install_mb} MB, not under the ${INSTALL_TARGET_MB} MB target"
echo "check_wheel: ok (diagnose, report, fleet, --version, extras' errors; no $HEAVY imported)"
