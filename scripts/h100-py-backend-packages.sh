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
# files" and exits 0 (a "not installed here" line names a framework the
# machine lacks, e.g. iree without its .whl; those modules go unchecked); every step "exit 0"; every verify row "pass" (iree
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


v="--device $device --timeout 180s --results $R"
step "packages import by name (no shadowing)" 120 ${PYTHON:-python3} scripts/check_backend_packages.py "$device"
step "backends start" 120 $X backends
step "verify gemm float32" 120 $X verify --workload gemm $v --dtype float32
step "verify gemm bfloat16 nt" 120 $X verify --workload gemm $v --dtype bfloat16 --layout nt
# head_dim 64: triton's kernels take powers of two (verify's default is 40)
step "verify attention both" 150 $X verify --workload attention $v --phase both --dtype bfloat16 --head-dim 64
step "verify scan backward" 120 $X verify --workload scan $v --phase backward
step "verify ttt mlp backward" 150 $X verify $v --model-size tiny --ttt-type mlp --phase backward
n=1024; [ "$device" = cpu ] && n=64  # Triton's interpreter on a CPU
step "run gemm ${n}^3 bfloat16" 150 $X run --workload gemm $v --m $n --n $n --k $n --dtype bfloat16 --repeats 20

echo | tee -a "$log"
echo "summary (step: exit status)" | tee -a "$log"
grep -E '^=== .*: exit [0-9]+ after' "$log" | sed 's/^=== /  /' | tee "$out/summary.txt"
grep -E 'fail|FAIL' "$log" | grep -v -e '^===' -e 'exit gracefully' -e 'plugin process exited' | head -20 | tee -a "$out/summary.txt"
echo "=== done at t=$(( $(date +%s) - start ))s, $fails step(s) failed or skipped" | tee -a "$log"
exit $(( fails > 0 ))
