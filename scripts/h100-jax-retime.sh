#!/usr/bin/env bash
# Re-time the committed JAX cells that the host-clock bias of issue 31
# touched, on the device clock (xbench_py.devclock; the attention also without
# its layout transposes), GPU machine, from the repository root:
#   DEADLINE=450 bash scripts/h100-jax-retime.sh RESULTS_DIR
# Most important first, each a sweep with the committed cells' settings:
#   1. attention llm, forward and backward, bfloat16, cold cache (the
#      attention default), warmup 3, repeats 10   (results/h100-attention/sweep: 72 jax cells)
#   2. scan grid, one shape a bucket, log and max, forward and backward,
#      float32, warm, warmup 2, repeats 5          (results/h100-scan/grid: 120 jax cells)
#   3. GEMM llm, then 4. GEMM square, bfloat16 and float32, warm, warmup 3,
#      repeats 10                                  (results/h100-gemm/sweep: 426 jax cells)
# Resumable: a sweep skips the cells its folder already holds, so a second
# call with the same RESULTS_DIR (carried back from the first; keep it inside
# the work tree, e.g. results/h100-jax-retime, so it travels) goes on where
# the first stopped. STEPS=scan,gemm runs only those steps. Needs bin/xbench
# and .whl/cupti_python-13.0*.whl (scripts/lib-cupti.sh); without the wheel
# the cells are timed on the host clock again, which the script refuses.
# GEMM_DTYPES (default bfloat16,float32) and GEMM_DIR (default gemm) pick the
# GEMM steps' dtypes and folder.
# Each cell's env.timing names its clock: cupti-kernel-span, or the
# framework's own clock for a launch-bound call (the scan at large T).
set -uo pipefail
R=${1:?usage: DEADLINE=seconds bash scripts/h100-jax-retime.sh RESULTS_DIR}
deadline=${DEADLINE:-450}
X=${XBENCH:-bin/xbench}
mkdir -p "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
start=$(date +%s)
log="$R/h100-jax-retime.log"
cache=${CACHE:-/tmp/xbench-compile-cache}
. "$(dirname "$0")/device-step.sh"
. "$(dirname "$0")/lib-cupti.sh"

install_cupti > "$log.cupti" 2>&1; cat "$log.cupti" >> "$log"  # not in a pipe: install_cupti exports PYTHONPATH
if ! python3 -c 'import sys; sys.path.insert(0, "plugins/_python"); from xbench_py import devclock as d; s, why = d.cupti_source(); sys.exit(0 if s else (print(why) or 1))'; then
  echo "no device clock here: refusing to re-time on the host clock" | tee -a "$log"
  exit 2
fi

step "attention llm forward,backward" 9999 $X sweep --workload attention --device cuda --shapes llm \
  --phase forward,backward --dtype bfloat16 --backends jax --warmup 3 --repeats 10 --timeout 120s \
  --compile-cache "$cache" --results "$R/attention"
step "scan grid" 9999 $X sweep --workload scan --device cuda --shapes grid --per-bucket 1 \
  --semiring log,max --phase forward,backward --backends jax --warmup 2 --repeats 5 --timeout 120s \
  --cold-cache=false --compile-cache "$cache" --results "$R/scan"
for shapes in llm square; do
  step "gemm $shapes" 9999 $X sweep --workload gemm --device cuda --shapes $shapes --dtype "${GEMM_DTYPES:-bfloat16,float32}" \
    --backends jax --warmup 3 --repeats 10 --timeout 120s --cold-cache=false --compile-cache "$cache" \
    --results "$R/${GEMM_DIR:-gemm}"
done
for d in attention scan ${GEMM_DIR:-gemm}; do
  [ -d "$R/$d" ] && { echo "--- $d"; $X sweep --results "$R/$d" --status; } 2>&1 | tee -a "$log"
done
# Which clock each cell got (first word of env.timing), by folder.
python3 - "$R" <<'EOF' | tee -a "$log"
import collections, glob, json, os, sys
for d in ("attention", "scan", os.environ.get("GEMM_DIR", "gemm")):
    c = collections.Counter()
    for f in glob.glob(os.path.join(sys.argv[1], d, "*.json")):
        if os.path.basename(f).startswith("_"):
            continue
        r = json.load(open(f))
        c[(r.get("status"), r.get("env", {}).get("timing", "").split(":")[0])] += 1
    print(d, dict(c))
EOF
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
