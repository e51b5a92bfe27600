#!/usr/bin/env bash
# The H100 probe of IREE (issue 33), run from the repository root on the GPU
# machine with the runtime wheel and the precompiled modules carried along:
#   carry: .whl (iree_base_runtime-3.13.0-cp312-abi3-manylinux_2_28_x86_64.whl)
#          .iree-probe (made here by: python scripts/iree_precompile.py .iree-probe --probe)
#   bash scripts/probe-iree.sh OUTDIR        (about 1-2 minutes)
# Prints what IREE's runtime sees (drivers, devices), then for each candidate
# CUDA target (sm_80, sm_89 +ptx78, sm_90a stated by hand:
# plugins/_python/xbench_iree/targets.py) the correctness of three small gemms against numpy and
# the time of bf16 4096^3/8192^3 and f32 4096^3 gemms beside torch.matmul.
set -uo pipefail
out=${1:-/tmp/probe-iree}
mkdir -p "$out"
log="$out/probe-iree.log"
if ! python3 -c 'import iree.runtime' 2>/dev/null; then
  site=/tmp/iree-site
  python3 -m pip install -q --no-index --no-deps --target "$site" .whl/iree_base_runtime-*.whl 2>&1 | tail -3
  export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
fi
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,compute_cap,clocks.sm,clocks.max.sm --format=csv; } 2>&1 | tee "$log"
python3 -c 'import ml_dtypes, numpy; print("numpy", numpy.__version__, "ml_dtypes", ml_dtypes.__version__)' 2>&1 | tee -a "$log"
timeout -k 5 400 python3 scripts/iree_probe.py .iree-probe ${TARGETS:-} 2>&1 | tee -a "$log"
echo "probe exit ${PIPESTATUS[0]}; log in $log"
