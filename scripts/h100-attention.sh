#!/usr/bin/env bash
# The H100 measurements of the attention workload (issue 13), most important
# first, in one device call: every backend verified against the float64
# reference (forward and backward, bfloat16), the reference point of the
# issue (batch 1, 32 heads over 8 kv heads, seq_len 4096, head_dim 128,
# causal, bfloat16) forward and backward on every backend and kernel
# variant, then the `llm` suite forward and backward across the backends,
# resumable. From the repository root on the GPU machine, with a static
# bin/xbench built beforehand:
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
#   DEADLINE=560 bash scripts/h100-attention.sh OUTDIR
# STEPS=sweep resumes only the sweep. On a CPU, as a check of the script:
#   DEVICE=cpu SHAPES=scripts/testdata/tiny-attention.csv REF="--batch 1 --heads 4 --kv-heads 2 --seq-len 64 --head-dim 32" bash scripts/h100-attention.sh /tmp/a
set -uo pipefail
out=${1:-/tmp/h100-attention-out}
deadline=${DEADLINE:-560}
device=${DEVICE:-cuda}
shapes=${SHAPES:-llm}
ref=${REF:---batch 1 --heads 32 --kv-heads 8 --seq-len 4096 --head-dim 128}
X=${XBENCH:-bin/xbench}
R=${R:-results/h100-attention}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
# The sweep leaves pytorch/compile out (inductor compiles each shape anew, 10 s
# and more); the reference point times it.
backends=pytorch,pytorch/sdpa-flash,jax,triton,burnstyle-hip
kernels=pytorch,pytorch/sdpa-flash,pytorch/sdpa-cudnn,pytorch/compile,jax,jax/cudnn,triton,burnstyle-hip
start=$(date +%s)
log="$out/h100-attention.log"
: >"$log"

. "$(dirname "$0")/device-step.sh"

[ "$device" = cuda ] && step machine 15 nvidia-smi -L
# The verify defaults (head_dim 40, 37 positions) exercise every mask; the
# triton kernels take powers of two only, so a second shape (head_dim 64,
# 200 positions: no multiple of any tile) verifies them.
v64="--head-dim 64 --seq-len 200"
step "verify forward bfloat16" 120 $X verify --workload attention --device "$device" --dtype bfloat16 --timeout 100s --results "$R/verify"
step "verify forward bfloat16 d64 causal" 120 $X verify --workload attention --device "$device" --dtype bfloat16 $v64 --causal true --timeout 100s --results "$R/verify"
step "verify backward bfloat16 d64 causal" 120 $X verify --workload attention --device "$device" --dtype bfloat16 $v64 --causal true --phase backward --timeout 100s --results "$R/verify"
step "verify forward float32 d64" 90 $X verify --workload attention --device "$device" --dtype float32 $v64 --timeout 80s --results "$R/verify"
for phase in forward backward; do
  step "reference point $phase" 150 $X run --workload attention --device "$device" $ref --causal true --dtype bfloat16 \
    --phase "$phase" --backends "$kernels" --timeout 120s --results "$R/reference"
done
step "sweep $shapes forward,backward" 9999 $X sweep --workload attention --device "$device" --shapes "$shapes" \
  --phase forward,backward --dtype bfloat16 --backends "$backends" --warmup 3 --repeats 10 --timeout 120s --results "$R/sweep"
$X sweep --results "$R/sweep" --status 2>&1 | tee -a "$log"
tar czf "$out/results-attention.tgz" "$R" 2>>"$log"
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
