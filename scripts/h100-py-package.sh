#!/usr/bin/env bash
# Issue 27's Python slice on the GPU machine: after the shared contract
# became the package plugins/_python/xbench_py (types, runner, serve, cli),
# every Python backend still starts through the harness (protocol 2 in its
# info reply), verifies on the GPU, and reads the device clock; and
# pytorch/compile's attention backward in float32, which failed before
# (a compiled backward with donated buffers refuses retain_graph=True), now
# passes. From the repository root on the GPU machine, static bin/xbench:
#   bash scripts/h100-py-package.sh "$OUT"        (about 6 minutes)
# On a CPU, as a check of the script: DEVICE=cpu bash scripts/h100-py-package.sh /tmp/p
set -uo pipefail
out=${1:-/tmp/h100-py-package-out}
deadline=${DEADLINE:-540}
device=${DEVICE:-cuda}
X=${XBENCH:-bin/xbench}
R="$out/results"
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
start=$(date +%s)
log="$out/h100-py-package.log"
: >"$log"

. "$(dirname "$0")/device-step.sh"
# cupti-python from .whl/ when carried, for the device clock (says so without it)
. "$(dirname "$0")/lib-cupti.sh"
install_cupti > "$log.cupti" 2>&1; cat "$log.cupti" | tee -a "$log"  # not in a pipe: it exports PYTHONPATH

v="--device $device --timeout 180s --results $R"
# every backend starts, answers info (protocol 2) and lists its capabilities
step "backends start" 120 $X backends
step "device clock source" 30 python3 -c 'import sys; sys.path.insert(0, "plugins/_python")
from xbench_py import devclock; src, why = devclock.cupti_source(); print("cupti:", bool(src), why or "")'
step "verify gemm bfloat16" 120 $X verify --workload gemm $v --dtype bfloat16 --layout nt
# the fixed cell: pytorch/compile attention backward in float32
step "verify attention backward float32 (pytorch/compile)" 150 $X verify --workload attention $v --phase backward \
  --dtype float32 --backends pytorch,pytorch/compile
step "verify scan" 120 $X verify --workload scan $v
step "verify ttt tiny linear" 120 $X verify $v --model-size tiny --ttt-type linear

echo | tee -a "$log"
echo "summary (step: exit status)" | tee -a "$log"
grep -E '^=== .*: exit [0-9]+ after' "$log" | sed 's/^=== /  /' | tee "$out/summary.txt"
grep -E 'fail|FAIL' "$log" | grep -v -e '^===' -e 'exit gracefully' -e 'plugin process exited' | head -20 | tee -a "$out/summary.txt"
echo "=== done at t=$(( $(date +%s) - start ))s, $fails step(s) failed or skipped" | tee -a "$log"
exit $(( fails > 0 ))
