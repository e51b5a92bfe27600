#!/usr/bin/env bash
# The H100 measurements behind the README's TTT table, in ONE device call
# (device time is scarce), run from the repository root on the GPU machine
# with a static bin/xbench built beforehand:
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
#   DEADLINE=590 bash scripts/h100.sh OUTDIR
# Every row of the table is one `xbench run` of every backend on the same
# configuration (125m, batch 1, seq-len 2048, mini-batch 16; 3 warm-up and
# 10 timed calls), most important first; each step is cut off so the whole
# script ends by DEADLINE seconds, and every finished result is already on
# disk (results are written atomically) and packed into OUTDIR. The
# verification at 125m (forward, the training step's gradients, the mamba
# backbone) is scripts/h100-verify.sh, run before this in the same session.
# STEPS="word,word" runs only the steps whose name contains one of the words.
set -uo pipefail
out=${1:-/tmp/h100-out}
deadline=${DEADLINE:-590}
X=${XBENCH:-bin/xbench}
R=${R:-results/h100-table}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
all=burnstyle-hip,jax,pytorch/compile,triton,pytorch
gpu="--device cuda --model-size 125m --batch 1 --seq-len 2048 --mini-batch 16 --warmup 3 --repeats 10 --timeout 240s"
start=$(date +%s)
log="$out/h100.log"
: >"$log"

. "$(dirname "$0")/device-step.sh"

step machine 20 sh -c 'nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc'
step "run linear forward float32" 120 $X run $gpu --ttt-type linear --dtype float32 --backends "$all" --results "$R"
step "run linear forward bfloat16" 100 $X run $gpu --ttt-type linear --dtype bfloat16 --backends "$all" --results "$R"
step "run linear backward float32" 200 $X run $gpu --phase backward --ttt-type linear --dtype float32 --backends "$all" --results "$R"
step "run mamba linear forward float32" 110 $X run $gpu --backbone mamba --ttt-type linear --dtype float32 --backends "$all" --results "$R"
step "run mlp forward float32" 110 $X run $gpu --ttt-type mlp --dtype float32 --backends "$all" --results "$R"
step "run linear inner-only float32" 60 $X run $gpu --phase inner_only --ttt-type linear --dtype float32 --backends "$all" --results "$R"
step "calibrate the device through pytorch" 40 $X calibrate --backends pytorch --device cuda --dtypes float32,bfloat16 --results "$R"
tar czf "$out/results-table.tgz" "$R" 2>>"$log"
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
