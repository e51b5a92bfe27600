#!/usr/bin/env bash
# Issue 30, "inner-only at most 0.3 ms", through the harness: one `xbench run`
# of TTT 125m linear inner-only float32 (B=1, L=2048, mini-batch 16) with the
# peers beside burnstyle-hip (its default since the exchange work: cluster
# kernel, 8 CTAs a head, st.async exchange), then burnstyle-hip alone with
# run 6's kernel (XBENCH_GPU_CLUSTER=4 XBENCH_GPU_EXCHANGE=1) and with 4 CTAs
# and st.async (the forward's inner kernel), then the float32 forward of
# burnstyle-hip (4 CTAs, st.async) for the record. In at most 240 s
# (typically 120-180: the peers' imports and compiles). From the repository
# root on the GPU machine, bin/ built by build_xbench (scripts/lib.sh):
#   bash scripts/h100-exchange-run.sh OUTDIR
# It must show burnstyle-hip's inner-only median below 0.3 ms (gpucheck:
# 0.244 at commit 2046383), every backend's status ok.
# On a CPU, as a check of the script: DEVICE=cpu SIZE=tiny LEN=64 PEERS= bash scripts/h100-exchange-run.sh /tmp/r
set -uo pipefail
out=${1:-/tmp/h100-exchange-run}
deadline=${DEADLINE:-240}
device=${DEVICE:-cuda}
size=${SIZE:-125m}
len=${LEN:-2048}
peers=${PEERS-,jax,pytorch/compile,triton,pytorch}
X=${XBENCH:-bin/xbench}
R=${R:-results/h100-exchange/run}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
start=$(date +%s)
log="$out/h100-exchange-run.log"
: >"$log"
. "$(dirname "$0")/device-step.sh"
gpu="--device $device --model-size $size --batch 1 --seq-len $len --mini-batch 16 --warmup 3 --repeats 10 --timeout 240s --ttt-type linear --dtype float32"
step "run inner-only float32, peers" 150 $X run $gpu --phase inner_only --backends "burnstyle-hip$peers" --results "$R/inner"
step "run inner-only float32, run 6's kernel" 30 env XBENCH_GPU_CLUSTER=4 XBENCH_GPU_EXCHANGE=1 \
  $X run $gpu --phase inner_only --backends burnstyle-hip --results "$R/inner-cl4-x1"
step "run inner-only float32, 4 CTAs st.async" 30 env XBENCH_GPU_CLUSTER=4 \
  $X run $gpu --phase inner_only --backends burnstyle-hip --results "$R/inner-cl4-x3"
step "run forward float32" 40 $X run $gpu --backends burnstyle-hip --results "$R/forward"
echo "=== done at t=$(( $(date +%s) - start ))s, $fails failed steps" | tee -a "$log"
grep -E "^(burnstyle-hip|jax|pytorch|triton) |^=== " "$log" | tee "$out/summary.txt"
