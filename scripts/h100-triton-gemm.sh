#!/usr/bin/env bash
# Triton's persistent TMA GEMM kernel (plugins/_python/xbench_triton/gemm_tma.py) on
# the H100, in one device call: verify first (16-bit shapes TMA takes, nn
# and nt, and a ragged one that keeps the pointer kernel), the kernels
# against torch.matmul interleaved call by call, then one xbench run of
# pytorch, burnstyle-hip and triton on the large bfloat16 shapes of the
# GEMM sweep (results/h100-gemm), warm as that sweep was.
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
#   DEADLINE=540 bash scripts/h100-triton-gemm.sh OUTDIR
set -uo pipefail
out=${1:-/tmp/h100-triton-gemm-out}
deadline=${DEADLINE:-540}
X=bin/xbench
R=${R:-results/h100-triton-gemm}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || echo unknown)}
start=$(date +%s)
log="$out/h100-triton-gemm.log"
: >"$log"
. "$(dirname "$0")/device-step.sh"

step machine 15 nvidia-smi -L
for layout in nn nt tn; do
  step "verify gemm bfloat16 $layout (tma)" 60 $X verify --workload gemm --device cuda --m 1000 --n 1104 --k 1200 \
    --layout "$layout" --dtype bfloat16 --backends triton,pytorch --results "$R/verify"
done
step "verify gemm bfloat16 nt (ragged: pointer kernel)" 60 $X verify --workload gemm --device cuda --m 1000 --n 1100 \
  --k 1202 --layout nt --dtype bfloat16 --backends triton --results "$R/verify"
step "kernel check" 150 sh -c "python3 scripts/dev/triton/gemm_kernel_check.py > $R/kernel-check-2.jsonl"
for set in "nn:scripts/testdata/vendor-square.csv" "nt:scripts/testdata/gemm-large-llm.csv"; do
  layout=${set%%:*} shapes=${set#*:}
  step "run large bfloat16 $layout" 200 $X run --workload gemm --device cuda --backends pytorch,burnstyle-hip,triton \
    --dtype bfloat16 --layout "$layout" --shapes "$shapes" --warmup 3 --repeats 10 --cold-cache=false --results "$R/large-$layout"
done
tar czf "$out/results-triton-gemm.tgz" "$R" 2>>"$log"
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
