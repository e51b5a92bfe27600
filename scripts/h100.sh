#!/usr/bin/env bash
# The H100 measurements behind results/h100 and the README table, in ONE
# device call (device time is scarce), run from the repository root on the
# GPU machine with a static bin/xbench built beforehand:
#   CGO_ENABLED=0 go build -o bin/xbench ./harness/cmd/xbench
#   DEADLINE=560 bash scripts/h100.sh OUTDIR
# Steps run most important first; each is cut off so the whole script ends
# by DEADLINE seconds, and every finished result is already on disk (results
# are written atomically as they complete) and packed into OUTDIR.
set -uo pipefail
out=${1:-/tmp/h100-out}
deadline=${DEADLINE:-560}
X=bin/xbench
R=results/h100
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=$(cat bin/COMMIT 2>/dev/null || echo unknown)
all=burnstyle-hip,pytorch,pytorch/compile,jax,triton
gpu="--device cuda --model-size 125m --batch 1 --seq-len 2048 --mini-batch 16 --warmup 3 --repeats 10"
start=$(date +%s)
log="$out/h100.log"

# step NAME SECONDS CMD...: run CMD if time is left, for at most SECONDS.
# STEPS="word,word" runs only the steps whose name contains one of the words.
step() {
  local name=$1 want=$2; shift 2
  if [ -n "${STEPS:-}" ] && ! echo ",$STEPS," | tr ',' '\n' | grep -v '^$' | grep -qF -f - <(echo "$name"); then return; fi
  local left=$(( deadline - ($(date +%s) - start) - 15 ))
  if [ "$left" -lt 30 ]; then echo "=== SKIP $name: ${left}s left" | tee -a "$log"; return; fi
  [ "$want" -gt "$left" ] && want=$left
  echo; echo "=== $name (limit ${want}s, t=$(( $(date +%s) - start ))s)" | tee -a "$log"
  timeout -k 5 "$want" "$@" 2>&1 | grep -v '^\[.*\] .*: .* \.\.\.$' | tee -a "$log"
}

step machine 20 sh -c 'nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc'
step "calibrate the device through pytorch" 45 $X calibrate --backends pytorch --device cuda --dtypes float32,tf32,bfloat16,float16 --results "$R"
step "run 125m linear forward float32, every backend" 200 $X run $gpu --ttt-type linear --dtype float32 --backends "$all" --results "$R"
step "run 125m linear forward bfloat16, every backend" 170 $X run $gpu --ttt-type linear --dtype bfloat16 --backends "$all" --results "$R"
step "verify 125m linear float32" 70 $X verify --device cuda --model-size 125m --ttt-type linear --dtype float32 --seq-len 128 --backends burnstyle-hip,pytorch,jax,triton --results "$R/verify"
step "verify 125m linear bfloat16" 60 $X verify --device cuda --model-size 125m --ttt-type linear --dtype bfloat16 --seq-len 128 --backends burnstyle-hip,pytorch,jax,triton --results "$R/verify"
step "inner-only 125m linear float32" 60 $X run $gpu --inner-only --ttt-type linear --dtype float32 --backends burnstyle-hip,pytorch,jax,triton --results "$R"
step "burnstyle-hip on the host CPU, 125m linear forward float32" 60 $X run --device cpu --model-size 125m --seq-len 2048 --warmup 0 --repeats 2 --timeout 55s --backends burnstyle-hip --results "$R/cpu"
step "run 125m mlp forward float32" 150 $X run $gpu --ttt-type mlp --dtype float32 --backends "$all" --results "$R"
step "run 125m linear backward float32" 120 $X run $gpu --backward --ttt-type linear --dtype float32 --backends pytorch,jax --results "$R"
# The chunked (wavefront) forward of burnstyle-hip against the flat one; needs
# bin/gpucheck (CGO_ENABLED=0 go build -o bin/gpucheck ./plugins/burnstyle-hip/gpu/cmd/gpucheck).
[ -x bin/gpucheck ] && step "chunks: burnstyle-hip chunked forward sweep" 120 bin/gpucheck -verify=false -chunks 1,2,4,8,16 -repeats 20 -json "$out/chunks.json"
tar czf "$out/results.tgz" results/h100
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
