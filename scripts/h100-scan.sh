#!/usr/bin/env bash
# The H100 measurements of the scan workload (issue 14), most important
# first, in one device call: every backend verified against the float64
# reference on the GPU (log forward and backward, max backward, entropy,
# float64), our Triton kernel checked and timed against flash-semicrf's
# own (scripts/dev/triton/scan_gpu_check.py), the T = 1024 reference shapes on
# every backend and variant, then the grid (T 256..4096 x K 4..24 x C 3..12,
# log and max, forward and backward) with one configuration per bucket,
# resumable. From the repository root on the GPU machine, with a static
# bin/xbench built beforehand and flash-semicrf unpacked into bin/py:
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
#   DEADLINE=560 bash scripts/h100-scan.sh OUTDIR
# STEPS=grid resumes only the grid. On a CPU, as a check of the script:
#   DEVICE=cpu SHAPES=scripts/testdata/tiny-scan.csv REF=scripts/testdata/tiny-scan.csv bash scripts/h100-scan.sh /tmp/s
set -uo pipefail
out=${1:-/tmp/h100-scan-out}
deadline=${DEADLINE:-560}
device=${DEVICE:-cuda}
shapes=${SHAPES:-grid}
ref=${REF:-scripts/testdata/scan-t1024.csv}
X=${XBENCH:-bin/xbench}
R=${R:-results/h100-scan}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export PYTHONPATH="$PWD/bin/py${PYTHONPATH:+:$PYTHONPATH}"
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
# flash-semicrf's default is its Triton kernel on a GPU; its PyTorch
# reference is timed at the reference shapes only (a Python loop over T, as
# ours is), our compile variant at one shape (inductor compiles each shape
# for tens of seconds).
cache=${CACHE:-/tmp/xbench-compile-cache}
start=$(date +%s)
log="$out/h100-scan.log"
: >"$log"

. "$(dirname "$0")/device-step.sh"

[ "$device" = cuda ] && step machine 15 nvidia-smi -L
# Verify: the kernels first (triton, burnstyle-hip) beside flash-semicrf; the
# Python loops (pytorch, its compile variant, flash-semicrf's reference) once.
fast=triton,burnstyle-hip,flash-semicrf,jax
vb="--device $device --timeout 100s --results $R/verify --compile-cache $cache"
step "verify log forward" 100 $X verify --workload scan --backends "$fast,pytorch,pytorch/compile,flash-semicrf/reference" $vb
step "verify log backward" 100 $X verify --workload scan --phase backward --backends "$fast,pytorch" $vb
step "verify max backward" 100 $X verify --workload scan --phase backward --semiring max --backends "$fast,pytorch" $vb
step "verify max forward" 80 $X verify --workload scan --semiring max --backends "$fast" $vb
step "verify entropy forward" 80 $X verify --workload scan --semiring entropy --backends "triton,burnstyle-hip,pytorch" $vb
step "verify log both float64" 80 $X verify --workload scan --phase both --dtype float64 --backends "triton,burnstyle-hip,flash-semicrf,pytorch" $vb
if [ "$device" = cuda ]; then
  step "triton vs flash-semicrf" 150 python3 scripts/dev/triton/scan_gpu_check.py
  [ -x bin/gpu/gputest ] && step "burnstyle-hip gpu scan test" 60 env XBENCH_REQUIRE_GPU=1 bin/gpu/gputest -test.run 'TestGPUScan' -test.v
fi
# The reference shapes (T = 1024) on the kernels, one run per phase, so
# their ratios come from one run; the Python loops at them once too.
for phase in forward backward; do
  step "reference shapes $phase" 150 $X run --workload scan --device "$device" --shapes "$ref" --phase "$phase" \
    --backends "$fast" --warmup 3 --repeats 10 --timeout 100s --results "$R/reference" --compile-cache "$cache"
done
step "reference shapes python loops" 150 $X run --workload scan --device "$device" --shapes "$ref" \
  --backends pytorch,flash-semicrf/reference --warmup 1 --repeats 3 --timeout 100s --results "$R/reference" --compile-cache "$cache"
step "compile variant" 120 $X run --workload scan --device "$device" --T 1024 --K 8 --C 6 --phase forward \
  --backends pytorch,pytorch/compile --warmup 2 --repeats 10 --timeout 100s --results "$R/reference" --compile-cache "$cache"
# The grid, one configuration per bucket: the kernels and jax first, then the
# eager pytorch scan (a Python loop of ~20 launches a position) in a folder
# of its own, so its seconds a cell do not hold the others back.
step "grid $shapes kernels" 9999 $X sweep --workload scan --device "$device" --shapes "$shapes" --per-bucket 1 \
  --semiring log,max --phase forward,backward --backends "$fast" --warmup 2 --repeats 5 --timeout 120s \
  --compile-cache "$cache" --results "$R/grid"
step "grid $shapes pytorch" 9999 $X sweep --workload scan --device "$device" --shapes "$shapes" --per-bucket 1 \
  --semiring log,max --phase forward,backward --backends pytorch --warmup 1 --repeats 3 --timeout 120s \
  --compile-cache "$cache" --results "$R/grid-pytorch"
$X sweep --results "$R/grid-pytorch" --status 2>&1 | tee -a "$log"
$X sweep --results "$R/grid" --status 2>&1 | tee -a "$log"
tar czf "$out/results-scan.tgz" "$R" 2>>"$log"
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
