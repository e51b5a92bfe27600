#!/usr/bin/env bash
# The H100 measurements of the TTT model for issue 16, most important first,
# in one device call: gpucheck's verification of the native GPU path (graph
# replays and eager launches), the chunked forward at several chunk counts
# (graph and eager, float32 and bfloat16), and the same forward through
# `xbench run`, eager and graphed, which is where gpucheck's and the
# harness's bfloat16 figures parted. From the repository root on the GPU
# machine, with static binaries built beforehand:
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
#   CGO_ENABLED=0 go build -o bin/gpucheck ./plugins/burnstyle-hip/tools/gpucheck
#   DEADLINE=300 bash scripts/h100-ttt.sh OUTDIR
# STEPS="chunks,run" runs only the steps whose names contain those words.
# On a CPU, as a check of the script (the steps that need a GPU fail fast):
#   DEVICE=cpu SIZE=tiny LEN=64 bash scripts/h100-ttt.sh /tmp/t
set -uo pipefail
out=${1:-/tmp/h100-ttt-out}
deadline=${DEADLINE:-300}
device=${DEVICE:-cuda}
size=${SIZE:-125m}
len=${LEN:-2048}
X=${XBENCH:-bin/xbench}
R=${R:-results/h100-ttt}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
start=$(date +%s)
log="$out/h100-ttt.log"
: >"$log"

. "$(dirname "$0")/device-step.sh"

gpu="--device $device --model-size $size --seq-len $len --batch 1 --warmup 3 --repeats 20 --backends burnstyle-hip"
[ "$device" = cuda ] && step machine 15 nvidia-smi -L
step "gpucheck verify" 150 bin/gpucheck -device "$device" -time=false -json "$out/gpucheck-verify.json"
step "gpucheck chunks" 150 bin/gpucheck -device "$device" -verify=false -chunks 1,2,4,8 -chunktypes linear,mlp -tsize "$size" -tlen "$len" \
  -repeats 20 -json "$out/gpucheck-chunks.json"
for dt in bfloat16 float32; do
  for ch in 1 4; do
    for g in 0 1; do
      step "run $dt chunks $ch graph $g" 60 env XBENCH_GPU_CHUNKS=$ch XBENCH_GPU_GRAPH=$g \
        $X run $gpu --dtype "$dt" --results "$R/run-graph$g-ch$ch"
    done
  done
done
tar czf "$out/results-ttt.tgz" "$R" 2>>"$log"
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
