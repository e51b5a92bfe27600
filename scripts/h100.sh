#!/usr/bin/env bash
# The H100 measurements behind results/h100 and the README table, run on the
# GPU machine from the repository root with a static bin/xbench built here:
#   CGO_ENABLED=0 go build -o bin/xbench ./harness/cmd/xbench
#   bash scripts/h100.sh verify|compare|matrix OUTDIR
# Each part is one device call; the machine has python3 with torch, jax and
# triton, and no Go. Results land in results/h100/ and a tarball in OUTDIR.
set -uo pipefail
part=${1:?part: verify, compare or matrix}
out=${2:-/tmp/h100-out}
X=bin/xbench
R=results/h100
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=$(cat bin/COMMIT 2>/dev/null || echo unknown)
all=burnstyle-hip,pytorch,pytorch/compile,jax,triton
gpu="--device cuda --model-size 125m --batch 1 --seq-len 2048 --mini-batch 16 --warmup 3 --repeats 10"
step() { echo; echo "=== $* ($(date +%T))"; }

case "$part" in
verify)
  step "machine"
  nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
  $X backends
  for cfg in "linear float32" "linear bfloat16" "mlp float32" "mlp bfloat16"; do
    set -- $cfg
    step "verify 125m $1 $2 on the H100"
    $X verify --device cuda --model-size 125m --ttt-type "$1" --dtype "$2" --seq-len 128 \
      --backends burnstyle-hip,pytorch,jax,triton --results "$R/verify" 2>&1 | grep -v '^\[' | tee -a "$out/verify.txt"
  done
  step "verify tiny inner-only float32"
  $X verify --device cuda --model-size tiny --inner-only --backends burnstyle-hip,pytorch,jax,triton --results "$R/verify" 2>&1 | tee -a "$out/verify.txt"
  ;;
compare)
  for d in float32 bfloat16; do
    step "run: every backend, 125m linear forward $d"
    $X run $gpu --ttt-type linear --dtype "$d" --backends "$all" --results "$R" 2>&1 | tee -a "$out/compare.txt"
  done
  step "issue 2: burnstyle-hip on this machine's CPU, 125m linear forward float32"
  $X run --device cpu --model-size 125m --seq-len 2048 --warmup 1 --repeats 3 --backends burnstyle-hip --results "$R/cpu" 2>&1 | tee -a "$out/compare.txt"
  ;;
matrix)
  step "sweep: mlp forward, and inner-only, float32 and bfloat16, every backend"
  $X sweep $gpu --ttt-type linear,mlp --dtype float32,bfloat16 --phase inner_only --backends "$all" --results "$R/sweep" 2>&1 | tail -5
  $X sweep $gpu --ttt-type mlp --dtype float32,bfloat16 --phase forward --backends "$all" --results "$R/sweep" 2>&1 | tail -5
  step "sweep: backward, linear float32"
  $X sweep $gpu --ttt-type linear --dtype float32 --phase backward --backends pytorch,pytorch/compile,jax --results "$R/sweep" 2>&1 | tail -5
  $X sweep --results "$R/sweep" --csv | tee "$out/matrix.csv"
  ;;
esac
tar czf "$out/results-$part.tgz" results/h100
