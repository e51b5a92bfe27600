#!/usr/bin/env bash
# The H100 measurements of the GEMM workload (issue: the workload axis) and
# a re-check that TTT still verifies after it, in as few device calls as
# possible, run from the repository root on the GPU machine with a static
# bin/xbench built beforehand:
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
#   DEADLINE=560 bash scripts/h100-gemm.sh OUTDIR
# The sweep is resumable: a second call with STEPS=sweep finishes it.
set -uo pipefail
out=${1:-/tmp/h100-gemm-out}
deadline=${DEADLINE:-560}
X=bin/xbench
R=${R:-results/h100-gemm}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=$(cat bin/COMMIT 2>/dev/null || echo unknown)
all=pytorch,jax,triton,burnstyle-hip
start=$(date +%s)
log="$out/h100-gemm.log"

# step NAME SECONDS CMD...: as in scripts/h100.sh.
step() {
  local name=$1 want=$2; shift 2
  if [ -n "${STEPS:-}" ] && ! echo ",$STEPS," | tr ',' '\n' | grep -v '^$' | grep -qF -f - <(echo "$name"); then return; fi
  local left=$(( deadline - ($(date +%s) - start) - 15 ))
  if [ "$left" -lt 30 ]; then echo "=== SKIP $name: ${left}s left" | tee -a "$log"; return; fi
  [ "$want" -gt "$left" ] && want=$left
  echo; echo "=== $name (limit ${want}s, t=$(( $(date +%s) - start ))s)" | tee -a "$log"
  timeout -k 5 "$want" "$@" 2>&1 | grep -v '^\[.*\] .*: .* \.\.\.$' | tee -a "$log"
}

step machine 15 sh -c 'nvidia-smi -L; nproc'
step "verify gemm float32" 180 $X verify --workload gemm --device cuda --m 1000 --n 1100 --k 1200 --dtype float32 --backends "$all" --results "$R/verify"
step "verify gemm bfloat16 nt" 60 $X verify --workload gemm --device cuda --m 1000 --n 1100 --k 1200 --layout nt --dtype bfloat16 --backends "$all" --results "$R/verify"
step "verify ttt 125m linear float32" 70 $X verify --device cuda --model-size 125m --ttt-type linear --dtype float32 --seq-len 128 --backends burnstyle-hip,pytorch,jax,triton --results "$R/verify"
step "calibrate" 45 $X calibrate --backends pytorch --device cuda --dtypes float32,tf32,bfloat16 --results "$R"
step "sweep gemm square+llm bfloat16,float32" 9999 sh -c "
  t0=\$(date +%s)
  $X sweep --workload gemm --device cuda --backends $all --dtype bfloat16,float32 --shapes square,llm --warmup 3 --repeats 10 --timeout 120s --cold-cache=false --results $R/sweep
  echo sweep wall \$(( \$(date +%s) - t0 ))s"
$X sweep --results "$R/sweep" --status 2>&1 | tee -a "$log"
tar czf "$out/results-gemm.tgz" "$R"
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
