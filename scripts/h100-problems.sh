#!/usr/bin/env bash
# The H100 baselines of the shipped problem set (issue 15): eager and
# torch.compile (inductor default) timings of problems/level1 and level2 in
# KernelBench's format, the candidates' gate and score, the wall time of the
# whole run. From the repository root on the GPU machine, with a static
# bin/xbench built beforehand:
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
#   DEADLINE=560 bash scripts/h100-problems.sh "$OUT"
# Writes results/timing/$HARDWARE/baseline_time_torch*.json, the sweep under
# results/problems/$HARDWARE, and OUTDIR/problems.tgz of both plus the log.
# The same script on the CPU (DEVICE=cpu HARDWARE=cpu-local) is its test run.
# MODES=eager,compile,max-autotune adds the max-autotune-no-cudagraphs variant.
set -uo pipefail
out=${1:-${OUT:-/tmp/h100-problems-out}}
deadline=${DEADLINE:-560}
device=${DEVICE:-cuda}
hw=${HARDWARE:-H100}
repeats=${REPEATS:-100}
X=bin/xbench
mkdir -p "$out"
export PYTHONUNBUFFERED=1
export XBENCH_GIT_COMMIT=$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
backends=pytorch,pytorch/compile
case ",${MODES:-}," in *,max-autotune,*) backends=$backends,pytorch/compile-max-autotune ;; esac
start=$(date +%s)
log="$out/h100-problems.log"
: > "$log"
fails=0

STEP_RESERVE=15 STEP_MIN=20
. "$(dirname "$0")/device-step.sh"  # step NAME SECONDS CMD...

step machine 15 sh -c 'nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"; nproc; '"$X"' backends 2>&1 | grep -E "^(pytorch|candidates)"'
step "verify level2/1 against float64" 120 $X verify --workload problem --level 2 --problem 1 --device "$device" \
  --backends "$backends" --results "results/problems/$hw/verify"
step "baseline $backends (whole set, $repeats repeats)" 9999 $X problems baseline --hardware "$hw" --device "$device" \
  --backends "$backends" --level 1,2 --warmup 3 --repeats "$repeats" --timeout 300s
for kind in right wrong; do
  step "candidates $kind" 240 $X problems candidates --candidates "problems/candidates/$kind" --device "$device" \
    --level 1,2 --warmup 3 --repeats "$repeats" --results "results/problems/$hw/candidates-$kind"
  for f in results/timing/"$hw"/baseline_time_torch*.json; do
    [ -f "$f" ] && step "score $kind vs $(basename "$f")" 30 $X problems score --baseline "$f" --results "results/problems/$hw/candidates-$kind"
  done
done
echo "=== whole run: $(( $(date +%s) - start ))s, $fails failed steps" | tee -a "$log"
ls -l results/timing/"$hw" 2>&1 | tee -a "$log"
tar czf "$out/problems.tgz" "results/timing/$hw" "results/problems/$hw" "$log" 2>>"$log"
echo "=== wrote $out/problems.tgz"
exit $(( fails > 0 ))
