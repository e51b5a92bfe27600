#!/usr/bin/env bash
# burnstyle-hip's Hopper attention kernel on the H100 (issue 30: wgmma, TMA
# tensor maps, producer/consumer warpgroups; attention_wgmma.cu), in both
# consumer schedules: the serial default (per tile q.k^T, softmax, P.v;
# 128-key tiles) and the one that overlaps tile i's softmax with P.v of
# tile i-1 (FA3's intra-warpgroup pipelining; 96-key tiles at head dim 128;
# burnstyle-hip/wgmma-overlap). Most
# diagnostic first, about 80 s (at most ~4 minutes):
#   1. debug: each operand path alone on the first k/v tile (raw q.k^T
#      against a CPU product; P = I so out row r = v row r % tile, with both
#      orders of v's descriptor offsets), both schedules, every mismatch
#      named by row, column and where the value belongs (TestGPUWGMMADebug);
#   2. the whole kernel against the float64 reference at edge shapes in both
#      schedules, then the test's own timings at the issue's shape: serial,
#      overlap, mma.sync, overlap+ping-pong, overlap with 64-key tiles and with 3
#      stages, serial with 96-key tiles, serial+ping-pong (TIMING lines;
#      TestGPUWGMMA);
#   3. xbench verify (burnstyle-hip and burnstyle-hip/wgmma-overlap) for
#      bfloat16 and float16, causal and not, GQA and not
#      (scripts/testdata/wgmma-verify.plan);
#   4. one xbench run at the issue's shape (batch 4, 32/8 heads, 4096, head
#      dim 128, causal, bfloat16) with pytorch (cuDNN), triton, burnstyle-hip
#      and burnstyle-hip/wgmma-overlap;
# then a summary. Build beforehand (this machine has Go, the GPU machine not):
#   . scripts/lib.sh && build_xbench
#   CGO_ENABLED=0 go test -c -o bin/gpu/attention.test ./plugins/burnstyle-hip/gpu/attention
#   bash scripts/h100-wgmma.sh OUTDIR        # on the GPU machine, bin/ carried
# STEPS=debug,verify runs only those steps (device-step.sh). On a CPU, as a
# check of the script (the GPU steps then fail or are unsupported):
#   DEVICE=cpu SHAPE="--batch 1 --heads 4 --kv-heads 2 --seq-len 64 --head-dim 64" bash scripts/h100-wgmma.sh /tmp/w
set -uo pipefail
out=${1:-/tmp/h100-wgmma-out}
deadline=${DEADLINE:-235}
device=${DEVICE:-cuda}
shape=${SHAPE:---batch 4 --heads 32 --kv-heads 8 --seq-len 4096 --head-dim 128}
X=${XBENCH:-bin/xbench}
T=${ATTN_TEST:-bin/gpu/attention.test}
R=${R:-$out/results}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
start=$(date +%s)
log="$out/h100-wgmma.log"
: >"$log"
STEP_MIN=${STEP_MIN:-20}
. "$(dirname "$0")/device-step.sh"

echo "commit $XBENCH_GIT_COMMIT" | tee -a "$log"
[ "$device" = cuda ] && step machine 10 nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv
if [ -x "$T" ]; then
  step "debug (one tile, each operand path)" 60 env XBENCH_REQUIRE_GPU=1 "$T" -test.run '^TestGPUWGMMADebug$' -test.v
  step "gpu test (edges vs float64, timing)" 120 env XBENCH_REQUIRE_GPU=1 "$T" -test.run '^TestGPUWGMMA$' -test.v
else
  echo "=== SKIP debug and gpu test: no $T (build it: CGO_ENABLED=0 go test -c -o $T ./plugins/burnstyle-hip/gpu/attention)" | tee -a "$log"
  fails=$((fails+2))
fi
step "verify bf16/f16 causal/not GQA/not" 45 $X verify --plan scripts/testdata/wgmma-verify.plan --device "$device" \
  --backends burnstyle-hip,burnstyle-hip/wgmma-overlap --timeout 30s --results "$R/verify"
step "run issue shape" 100 $X run --workload attention --device "$device" $shape --causal true --dtype bfloat16 --repeats 20 --timeout 90s \
  --backends pytorch,triton,burnstyle-hip,burnstyle-hip/wgmma-overlap --results "$R/run"

# Summary: the debug verdicts, the checks' failures, the verify verdicts,
# and the run's medians with the kernel each burnstyle-hip cell ran
# (env.settings.attention_kernel).
{
  echo
  echo "=== SUMMARY (t=$(( $(date +%s) - start ))s, $fails step(s) failed or skipped)"
  grep -a "^=== .*: exit" "$log" | sed 's/^=== /  step /'
  echo "-- debug (first mismatches; RESULT lines name the v descriptor order that works)"
  grep -a -E "RESULT:|MISMATCH|elements wrong|all [0-9]+ elements match" "$log" | head -40 | sed 's/^ */  /'
  echo "-- gpu test"
  grep -a -E "^\s*--- (FAIL|PASS)|rel L2 .* \(tol|TIMING" "$log" | grep -a -v "PASS: TestGPUWGMMA" | head -40 | sed 's/^ */  /'
  echo "-- verify (burnstyle-hip rows)"
  grep -a -E "^verify attention|^burnstyle-hip" "$log" | grep -a -v -E "(cold|warm)-cache" | head -60 | sed "s/^/  /"
  echo "-- run"
  python3 "$(dirname "$0")/attention-run-summary.py" "$R/run" pytorch triton
} 2>&1 | tee -a "$log"
tar czf "$out/results-wgmma.tgz" -C "$R" . 2>>"$log"
echo "=== done at t=$(( $(date +%s) - start ))s; log $log" | tee -a "$log"
