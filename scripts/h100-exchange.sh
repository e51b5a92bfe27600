#!/usr/bin/env bash
# The cluster kernel's cross-CTA exchanges on the H100 (issue 30: TTT 125m
# linear float32 inner-only at most 0.3 ms), in at most 150 s (typically
# 80-100): gpucheck -exchanges verifies every variant against the float64
# model (inner-only B=1 L=2048 float32, bfloat16 for one variant of each
# exchange; the float32 forward at L=128; the float32 training step, whose
# forward records the inner state, at tiny and 125m L=128 with the defaults
# and each exchange), then times inner-only float32 in two rounds over the
# variants (same process, same GPU state) with cycles per step by part, and
# the float32 forward of each variant:
#   1  two barrier.cluster rounds a step (run 6's kernel, the baseline)
#   2  one barrier.cluster round a step (the gradient sums formed early)
#   3  one st.async point-to-point exchange a step onto mbarriers
# CSxX runs X at CS CTAs per head (default 4). If the first step runs out
# of time (a wait that never completes hangs until its limit), the second
# runs the barrier variants alone, so their numbers come back regardless.
# Build beforehand (the GPU machine has no Go):
#   CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o .devbin/ ./plugins/burnstyle-hip/tools/gpucheck
#   bash scripts/h100-exchange.sh OUTDIR
# With BEFORE naming a second gpucheck built from an earlier commit (e.g.
# .devbin/gpucheck-r2), its exchange-3 variants are timed after the first
# step, in the same call (BEFORE_VARIANTS, default 3,8x3). VARIANTS
# overrides the list. On a CPU, as a check of the script, with the
# emulator's variables set as in gpu/internal/emutest:
#   SIZE=tiny LEN=64 bash scripts/h100-exchange.sh /tmp/x
set -uo pipefail
out=${1:-/tmp/h100-exchange-out}
deadline=${DEADLINE:-150}
size=${SIZE:-125m}
len=${LEN:-2048}
variants=${VARIANTS:-1,2,3,8x2,8x3}
G=${GPUCHECK:-.devbin/gpucheck}
mkdir -p "$out"
start=$(date +%s)
log="$out/exchange.log"
: >"$log"
STEP_MIN=${STEP_MIN:-20} STEP_RESERVE=${STEP_RESERVE:-3}
. "$(dirname "$0")/device-step.sh"
gc="-backward=false -tsize $size -tlen $len -repeats 20 -rounds 2"
step "exchanges $variants" 110 $G $gc -exchanges "$variants" -json "$out/exchange.json"
if grep -qE "^=== exchanges .*: exit (124|137) " "$log"; then
  safe=$(echo "$variants" | tr ',' '\n' | grep -v '3$' | paste -sd, -)
  step "exchanges $safe (barrier variants alone)" 60 $G $gc -rounds 1 -exchanges "$safe" -json "$out/exchange.json"  # the first wrote none: killed
fi
B=${BEFORE:-}
if [ -n "$B" ] && [ -x "$B" ]; then
  step "before: $B ${BEFORE_VARIANTS:-3,8x3}" 60 $B $gc -xtrain=false -exchanges "${BEFORE_VARIANTS:-3,8x3}"
fi
echo "=== summary (t=$(( $(date +%s) - start ))s, $fails failed steps)" | tee -a "$log"
grep -hE "^(cl[0-9]|  cl[0-9]|train |summary|gpucheck done|=== )" "$log" | grep -v "^=== summary" | tee "$out/summary.txt"
