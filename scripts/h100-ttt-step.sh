#!/usr/bin/env bash
# Issue 30's TTT training step (125m linear float32, B=1, L=2048) on the
# H100, in one device call: gpucheck's verification of the training step
# against the CPU float64 step (logits, loss, every parameter's gradient;
# every chunk kind of the chunked training forward), a CUPTI timeline of one
# step for the default and for each change turned off in turn (gpucheck
# -steptrace: what runs when, and how busy the GPU is beside each inner
# backward), then the step through `xbench run --phase backward` with the
# peers beside it. From the repository root on the GPU machine, with static
# binaries built beforehand:
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip ./plugins/burnstyle-hip/tools/gpucheck
#   DEADLINE=330 bash scripts/h100-ttt-step.sh OUTDIR   (~4-5 min with jax; BACKENDS=burnstyle-hip ~3 min)
# BACKENDS (default burnstyle-hip,jax) picks the run's backends; STEPS="a,b"
# runs only the steps whose names contain those words (device-step.sh).
# Expected (2026-11-27): every verification row PASS but the bfloat16 rows
# that failed before this change too; steptrace "default" well under its
# "launchprio"/"serial" rows; the run's burnstyle-hip median near gpucheck's.
set -uo pipefail
out=${1:-/tmp/h100-ttt-step}
deadline=${DEADLINE:-330}
B=${BIN:-bin}
R=${R:-results/h100-ttt-step}
backends=${BACKENDS:-burnstyle-hip,jax}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat "$B/COMMIT" 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
start=$(date +%s)
log="$out/h100-ttt-step.log"
: >"$log"

. "$(dirname "$0")/device-step.sh"

step machine 15 nvidia-smi -L
# tiny (every chunk kind, B=2, both inner models) and the issue's 125m
# linear; BCASES= (empty) verifies every case, ~6 min of float64 on the CPU
step "gpucheck verify backward" 120 "$B/gpucheck" -forward=false -backward=true -time=false \
  -bcases "${BCASES-tiny/,125m/linear/.}" -json "$out/verify.json"
step "gpucheck steptrace" 45 "$B/gpucheck" -verify=false -repeats 20 -steptrace default,launchprio,asap,flatfwd,serial \
  -timeline "$out/timeline.csv" -json "$out/steptrace.json"
step "run backward" 150 "$B/xbench" run --workload ttt --phase backward --model-size 125m --ttt-type linear \
  --dtype float32 --device cuda --seq-len 2048 --batch 1 --warmup 3 --repeats 20 --backends "$backends" --results "$R/run"
cp "$out/verify.json" "$out/steptrace.json" "$log" "$R/" 2>/dev/null
echo "=== summary" | tee -a "$log"
rows=$(grep -cE "^(125m|tiny) .*(PASS|FAIL|ERROR)|^inner backward alone" "$log")
echo "verification rows: $rows, not PASS: $(grep -E "^(125m|tiny) .*(FAIL|ERROR)|^inner backward alone.*(FAIL|ERROR)" "$log" | grep -vc " PASS")" | tee -a "$log"
grep -E "(FAIL|ERROR)" "$log" | grep -E "^(125m|tiny)|^inner" | tee -a "$log"
grep -E "^[a-z0-9]+ +median" "$log" | tee -a "$log"
echo "=== done at t=$(( $(date +%s) - start ))s, $fails failed steps" | tee -a "$log"
