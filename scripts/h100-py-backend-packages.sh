#!/usr/bin/env bash
# Issue 27: every Python backend is a package of its own under plugins/_python
# (xbench_pytorch, xbench_triton, xbench_jax, xbench_iree, xbench_candidates,
# xbench_flash_semicrf), imported by package name only, with plugins/_python
# the one entry each benchmark.py puts on sys.path. On the GPU the import
# paths differ from CI's (triton compiled rather than interpreted: its TMA
# GEMM module, the inner-loop backward kernels; jax and torch on cuda), so
# this checks there that
#   1. every module of every backend package imports in one interpreter,
#      TRITON_INTERPRET unset, and is the file its name says (no module found
#      by path order, none under a bare name);
#   2. every backend starts through bin/xbench (plugin.json -> benchmark.py);
#   3. verify passes on cuda for gemm (every backend, triton's TMA path at
#      bfloat16 nt), attention forward+backward, scan, TTT linear and mlp
#      backward (triton's hand-written inner-loop backward, the dense layers
#      from xbench_pytorch), and a timed gemm run of every backend.
# From the repository root on the GPU machine, static bin/xbench:
#   bash scripts/h100-py-backend-packages.sh "$OUT"      (about 6 minutes)
# What it must show: step 1 prints "packages: N modules, all named by their
# files" and exits 0; every step "exit 0"; every verify row "pass" (iree
# rows may say unsupported where its compile cache lacks a module).
# On a CPU, as a check of the script: DEVICE=cpu bash scripts/h100-py-backend-packages.sh /tmp/p
set -uo pipefail
out=${1:-/tmp/h100-py-backend-packages-out}
deadline=${DEADLINE:-540}
device=${DEVICE:-cuda}
X=${XBENCH:-bin/xbench}
R="$out/results"
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
start=$(date +%s)
log="$out/h100-py-backend-packages.log"
: >"$log"

. "$(dirname "$0")/device-step.sh"

check_packages() {
  python3 - "$device" <<'PY'
import importlib, os, sys
device = sys.argv[1]
pydir = os.path.abspath("plugins/_python")
sys.path.insert(0, pydir)
if device == "cpu":
    os.environ["TRITON_INTERPRET"] = "1"  # as benchmark.py settles it without a GPU
pkgs = sorted(d for d in os.listdir(pydir) if d.startswith("xbench_") and os.path.isfile(os.path.join(pydir, d, "__init__.py")))
failed = []
for p in pkgs:
    for f in sorted(os.listdir(os.path.join(pydir, p))):
        if f.endswith(".py") and f != "__init__.py":
            try:
                importlib.import_module(f"{p}.{f[:-3]}")
            except Exception as e:  # a missing optional package is reported, not hidden
                failed.append(f"{p}.{f[:-3]}: {type(e).__name__}: {e}")
wrong, n = [], 0
for name, mod in list(sys.modules.items()):
    fn = getattr(mod, "__file__", None)
    if not fn or not os.path.abspath(fn).startswith(pydir + os.sep):
        continue
    n += 1
    want = os.path.relpath(os.path.abspath(fn), pydir)[:-3].replace(os.sep, ".").removesuffix(".__init__")
    if name != want:
        wrong.append(f"{name} is {fn}")
print(f"packages: {', '.join(pkgs)}")
for line in failed + wrong:
    print("  " + line)
print(f"packages: {n} modules, " + ("all named by their files" if not wrong else f"{len(wrong)} NOT named by their files")
      + (f"; {len(failed)} failed to import" if failed else ""))
sys.exit(1 if wrong or failed else 0)
PY
}

v="--device $device --timeout 180s --results $R"
step "packages import by name (no shadowing)" 120 check_packages
step "backends start" 120 $X backends
step "verify gemm float32" 120 $X verify --workload gemm $v --dtype float32
step "verify gemm bfloat16 nt" 120 $X verify --workload gemm $v --dtype bfloat16 --layout nt
step "verify attention both" 150 $X verify --workload attention $v --phase both --dtype bfloat16
step "verify scan backward" 120 $X verify --workload scan $v --phase backward
step "verify ttt mlp backward" 150 $X verify $v --model-size tiny --ttt-type mlp --phase backward
step "run gemm 1024^3 bfloat16" 150 $X run --workload gemm $v --m 1024 --n 1024 --k 1024 --dtype bfloat16 --repeats 20

echo | tee -a "$log"
echo "summary (step: exit status)" | tee -a "$log"
grep -E '^=== .*: exit [0-9]+ after' "$log" | sed 's/^=== /  /' | tee "$out/summary.txt"
grep -E 'fail|FAIL' "$log" | grep -v -e '^===' -e 'exit gracefully' -e 'plugin process exited' | head -20 | tee -a "$out/summary.txt"
echo "=== done at t=$(( $(date +%s) - start ))s, $fails step(s) failed or skipped" | tee -a "$log"
exit $(( fails > 0 ))
