#!/usr/bin/env bash
# IREE on the H100 (issue 33), beside pytorch (cuBLAS; SDPA for attention),
# from the repository root on the GPU machine, which has IREE's runtime but
# not its compiler: carry
#   .whl/iree_base_runtime-3.13.0-cp312-abi3-manylinux_2_28_x86_64.whl (15 MB)
#   .iree-cache/   (made here: bash scripts/iree-precompile.sh .iree-cache; ~3 MB)
# and run, in 8-minute device calls (bin/xbench prebuilt):
#   DEADLINE=450 bash scripts/h100-iree.sh OUTDIR
#   DEADLINE=450 STEPS=sweep-gemm,ratios bash scripts/h100-iree.sh OUTDIR   (only if the first stopped early)
# Expected: verifies ~1.5 min, the attention sweep (six backends, 216 cells) ~5.5 min, gemm sweep ~5-6 min
# (852 cells: pytorch ~0.1 s a cell; iree ~0.3 s plus its float32 squares,
# up to 2.3 s a call at 16384^3, ~110 s in all): two calls, the second
# (STEPS=sweep-gemm,ratios) finishing the gemm sweep in ~2-3 min. Must show: iree passes every
# verify on cuda; its cells ok (an "unsupported ... not in the compile cache"
# cell names a module the precompile missed); the ratio table at the end.
set -uo pipefail
out=${1:-/tmp/h100-iree-out}
deadline=${DEADLINE:-450}
X=bin/xbench
R=${R:-results/h100-iree}
cache=${IREE_CACHE:-.iree-cache}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=$(cat bin/COMMIT 2>/dev/null || echo unknown)
export XBENCH_IREE_CUDA_TARGET=${XBENCH_IREE_CUDA_TARGET:-sm_80}  # what .iree-cache was compiled for
start=$(date +%s)
log="$out/h100-iree.log"

if ! python3 -c 'import iree.runtime' 2>/dev/null; then
  site=/tmp/iree-site
  python3 -m pip install -q --no-index --no-deps --target "$site" .whl/iree_base_runtime-*.whl 2>&1 | tail -3
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
fi
[ -d "$cache/iree" ] || echo "WARNING: no $cache/iree: every iree cell will answer unsupported (no compiler here)" | tee -a "$log"

. "$(dirname "$0")/device-step.sh"  # step NAME SECONDS CMD...: STEPS picks steps, each cut at the deadline

cc="--compile-cache $cache"
step machine 15 sh -c 'nvidia-smi -L; python3 -c "import iree.runtime as r; print(r.query_available_drivers())"'
step verify-gemm-f32 60 $X verify --workload gemm --device cuda --m 1000 --n 1100 --k 1200 --dtype float32 \
  --backends iree,pytorch $cc --results "$R/verify"
step verify-gemm-bf16 60 $X verify --workload gemm --device cuda --m 1000 --n 1100 --k 1200 --layout nt \
  --dtype bfloat16 --backends iree,pytorch $cc --results "$R/verify"
for d in bfloat16 float32; do
  step verify-attention-$d 60 $X verify --workload attention --device cuda --batch 2 --heads 4 --kv-heads 2 \
    --seq-len 133 --head-dim 40 --causal true --dtype $d --backends iree,pytorch $cc --results "$R/verify"
done
# Which attention modules run on the GPU: the first sweep's b32 h12 s512 d64
# cell ran past 100 s (scripts/iree_attention_probe.py separates MHA from GQA
# and a hoisted mask from one built each call).
step probe-attention 120 python3 scripts/iree_attention_probe.py "$cache" 45
# The attention llm suite, forward, bfloat16, with iree beside every other
# backend in one sweep (cold L2, the attention default, as
# results/h100-attention/sweep was timed); a cell that hangs is cut at 60 s.
step sweep-attention 400 $X sweep --workload attention --device cuda --shapes llm --phase forward --dtype bfloat16 \
  --backends "${ATTN_BACKENDS:-iree,pytorch,pytorch/sdpa-flash,burnstyle-hip,triton,jax}" --warmup 3 --repeats 10 \
  --timeout 60s $cc --results "$R/attention-llm"
step sweep-gemm 9999 sh -c "
  t0=\$(date +%s)
  $X sweep --workload gemm --device cuda --backends iree,pytorch --dtype bfloat16,float32 --shapes square,llm \
    --warmup 3 --repeats 10 --timeout 120s --cold-cache=false $cc --results $R/gemm
  echo sweep wall \$(( \$(date +%s) - t0 ))s"
for s in gemm attention-llm; do [ -d "$R/$s" ] && $X sweep --results "$R/$s" --status 2>&1 | tee -a "$log"; done
step ratios 20 python3 scripts/iree_ratio.py "$R/gemm" "$R/attention-llm"
tar czf "$out/results-iree.tgz" "$R"
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
