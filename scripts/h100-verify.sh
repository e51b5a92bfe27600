#!/usr/bin/env bash
# Issue 16's verification on the H100, before anything is timed: every TTT
# backend against the float64 reference at 125m (the reference runs on the
# host's CPU; seq-len 128 keeps it to seconds): the forward in float32 and
# bfloat16, the training step's gradients parameter by parameter (linear
# and mlp), and the mamba backbone forward and backward. From the
# repository root on the GPU machine, with a static bin/xbench:
#   DEADLINE=590 STEPS="linear backward,linear forward float32" bash scripts/h100-verify.sh OUTDIR
# (the whole list takes longer than one 10-minute device call: split it with STEPS)
# On a CPU, as a check of the script: DEVICE=cpu SIZE=tiny bash scripts/h100-verify.sh /tmp/v
set -uo pipefail
out=${1:-/tmp/h100-verify-out}
deadline=${DEADLINE:-1200}
device=${DEVICE:-cuda}
size=${SIZE:-125m}
X=${XBENCH:-bin/xbench}
R=${R:-results/h100-table/verify}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
all=burnstyle-hip,pytorch,jax,triton
v="--device $device --model-size $size --seq-len 128 --timeout 240s --results $R"
start=$(date +%s)
log="$out/h100-verify.log"
: >"$log"

. "$(dirname "$0")/device-step.sh"

# Limits: each step starts four backends and computes the float64 reference
# on the host; at 125m the training step's exports are 0.5-1 GB a backend,
# and jax and triton compile for the shape on their first call.
step "verify linear backward float32" 240 $X verify $v --ttt-type linear --phase backward --dtype float32 --backends "$all"
step "verify linear forward float32" 150 $X verify $v --ttt-type linear --dtype float32 --backends "$all"
step "verify linear forward bfloat16" 120 $X verify $v --ttt-type linear --dtype bfloat16 --backends "$all"
step "verify mamba backward float32" 240 $X verify $v --backbone mamba --ttt-type linear --phase backward --dtype float32 --backends "$all"
step "verify mamba forward float32" 150 $X verify $v --backbone mamba --ttt-type linear --dtype float32 --backends "$all"
step "verify mlp backward float32" 240 $X verify $v --ttt-type mlp --phase backward --dtype float32 --backends "$all"
tar czf "$out/results-verify.tgz" "$R" 2>>"$log"
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
