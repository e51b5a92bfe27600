#!/usr/bin/env bash
# burnstyle-hip's attention backward on the H100 (issue 30: "attention
# backward natively, at least at the speed of pytorch/sdpa-flash"), in about
# 190 s:
#   1. TestGPUAttentionGrad and TestGPUAttentionGradWGMMA: the backward
#      kernels against float64 (every dtype, head dims 40 to 256; on the
#      H100 the wgmma backward is the default at head dim 64 and 128 in 16
#      bits, the mma.sync one runs with GradMMASync or its knobs), then at
#      the issue's shape the mma.sync backward's time (its older builds,
#      grad_off=31..16, only with XBENCH_GRAD_ABLATION=1), the wgmma
#      backward's beside it with each of its changes turned off
#      (grad_wgmma_off=1, 2, 4, 5, and 7: the first build; 3 stages beside
#      red.global), both (forward and backward) with the backward's forward
#      on the wgmma kernel saving the lse (the default), on mma.sync (as
#      before) and overlapped, and the default's kernels' shares; every
#      check also compares the saved lse with float64;
#   2. one xbench run of the backward at the issue's shape (batch 4, 32/8
#      heads, 4096, head dim 128, causal, bfloat16) with pytorch (cuDNN),
#      pytorch/sdpa-flash, burnstyle-hip (wgmma) and burnstyle-hip/mma-sync;
#   2b. the same run of both (forward and backward: a training step's
#      attention), env.settings.attention_kernel naming both kernels;
#   3. xbench verify --phase backward/both for burnstyle-hip (wgmma),
#      burnstyle-hip/mma-sync and pytorch
#      (scripts/testdata/attn-bwd-verify.plan; b1 h4/2 s1000 kv1100 d128 is
#      non-causal: the workload allows causal only with kv_len = seq_len);
# then a summary. Build beforehand (this machine has Go, the GPU machine not):
#   . scripts/lib.sh && build_xbench
#   CGO_ENABLED=0 go test -c -o bin/gpu/attention.test ./plugins/burnstyle-hip/gpu/attention
#   bash scripts/h100-attn-bwd.sh OUTDIR        # on the GPU machine, bin/ carried
# STEPS=verify,run runs only those steps. On a CPU, as a check of the
# script (the GPU steps then fail or are unsupported):
#   DEVICE=cpu SHAPE="--batch 1 --heads 4 --kv-heads 2 --seq-len 64 --head-dim 64" bash scripts/h100-attn-bwd.sh /tmp/b
set -uo pipefail
out=${1:-/tmp/h100-attn-bwd-out}
deadline=${DEADLINE:-240}
device=${DEVICE:-cuda}
shape=${SHAPE:---batch 4 --heads 32 --kv-heads 8 --seq-len 4096 --head-dim 128}
X=${XBENCH:-bin/xbench}
T=${ATTN_TEST:-bin/gpu/attention.test}
R=${R:-$out/results}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
start=$(date +%s)
log="$out/h100-attn-bwd.log"
: >"$log"
STEP_MIN=${STEP_MIN:-20}
. "$(dirname "$0")/device-step.sh"
. "$(dirname "$0")/lib-cupti.sh"
install_cupti > "$log.cupti" 2>&1; cat "$log.cupti" >> "$log"  # the device clock for pytorch; not in a pipe: it exports PYTHONPATH

echo "commit $XBENCH_GIT_COMMIT" | tee -a "$log"
[ "$device" = cuda ] && step machine 10 nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv
if [ -x "$T" ]; then
  step "gpu test (vs float64, timing)" 110 env XBENCH_REQUIRE_GPU=1 "$T" -test.run '^TestGPUAttentionGrad(WGMMA)?$' -test.v
else
  echo "=== SKIP gpu test: no $T (build it: CGO_ENABLED=0 go test -c -o $T ./plugins/burnstyle-hip/gpu/attention)" | tee -a "$log"
  fails=$((fails+1))
fi
step "run backward at the issue shape" 40 $X run --workload attention --phase backward --device "$device" $shape --causal true \
  --dtype bfloat16 --repeats 10 --timeout 80s --backends pytorch,pytorch/sdpa-flash,burnstyle-hip,burnstyle-hip/mma-sync --results "$R/run"
step "run both at the issue shape" 40 $X run --workload attention --phase both --device "$device" $shape --causal true \
  --dtype bfloat16 --repeats 10 --timeout 80s --backends pytorch,pytorch/sdpa-flash,burnstyle-hip,burnstyle-hip/mma-sync --results "$R/run-both"
step "verify backward" 50 $X verify --plan scripts/testdata/attn-bwd-verify.plan --device "$device" \
  --backends burnstyle-hip,burnstyle-hip/mma-sync,pytorch --timeout 40s --results "$R/verify"

# Summary: the checks' failures and times, the verify verdicts, and the
# run's medians as ratios of sdpa-flash's throughput, with the kernels each
# burnstyle-hip cell ran (env.settings.attention_kernel).
{
  echo
  echo "=== SUMMARY (t=$(( $(date +%s) - start ))s, $fails step(s) failed or skipped)"
  grep -a "^=== .*: exit" "$log" | sed 's/^=== /  step /'
  echo "-- gpu test"
  grep -a -E "^\s*--- (FAIL|PASS)|rel L2 .* \(tol|lse( row|:) .*(wrong|want)|TIMING" "$log" | head -50 | sed 's/^ */  /' | cut -c1-330
  echo "-- verify"
  grep -a -E "^verify attention|^burnstyle-hip|^pytorch" "$log" | grep -a -v -E "(cold|warm)-cache" | head -60 | sed "s/^/  /"
  for rd in run run-both; do
  echo "-- $rd: phase $([ "$rd" = run ] && echo backward || echo both)"
  python3 "$(dirname "$0")/attention-run-summary.py" "$R/$rd" pytorch/sdpa-flash
  done
} 2>&1 | tee -a "$log"
tar czf "$out/results-attn-bwd.tgz" -C "$R" . 2>>"$log"
echo "=== done at t=$(( $(date +%s) - start ))s; log $log" | tee -a "$log"
