#!/usr/bin/env bash
# Compile, on a machine with the IREE compiler (this CPU machine: the venv of
# requirements.txt has iree-base-compiler), the modules the H100 run of IREE
# needs, into a compile-cache folder the GPU machine gets carried (it has the
# IREE runtime but not the compiler: plugins/_python/xbench_iree/cache.py):
#   bash scripts/iree-precompile.sh [OUT=.iree-cache] [TARGET=sm_80]
# What: every forward configuration of the sweeps scripts/h100-iree.sh runs,
# taken from the plans of the H100 sweeps of the same suites (gemm square nn
# + llm nt in bfloat16 and float32: results/h100-gemm/sweep; attention llm
# in bfloat16: results/h100-attention/sweep), bfloat16 gemms first, in the
# order of iree_precompile.plan_jobs, plus the configurations of its verify
# steps. BUDGET_MIB (default 6) caps the compressed size; the run says where
# it stopped if a module would pass it. About 2-3 s a module on 2 cores:
# ~20 minutes for all 460-odd, then seconds (modules already there are kept).
set -uo pipefail
out=${1:-.iree-cache}
target=${2:-sm_80}
py=${PYTHON:-.venv/bin/python}
cd "$(dirname "$0")/.."
mkdir -p "$out"
# The verify steps' configurations (bin/xbench verify's defaults for gemm
# and attention on cuda, as scripts/h100-iree.sh calls them) as a small plan.
verify_plan="$out/verify_plan.json"
$py - "$verify_plan" <<'PY'
import json, sys
cells = []
for dt, lay in (("float32", "nn"), ("bfloat16", "nt")):
    cells.append({"config": {"workload": "gemm", "phase": "forward",
                             "params": {"m": "1000", "n": "1100", "k": "1200", "batch": "1", "layout": lay, "dtype": dt}}})
for dt in ("bfloat16", "float32"):
    cells.append({"config": {"workload": "attention", "phase": "forward",
                             "params": {"batch": "2", "heads": "4", "kv_heads": "2", "seq_len": "133", "kv_len": "0",
                                        "head_dim": "40", "causal": "true", "dtype": dt}}})
json.dump({"cells": cells}, open(sys.argv[1], "w"), indent=1)
PY
$py scripts/iree_precompile.py "$out" --target "$target" --budget-mib "${BUDGET_MIB:-6}" \
  --plan "$verify_plan,results/h100-gemm/sweep/_plan.json,results/h100-attention/sweep/_plan.json"
rc=$?
echo "compile cache: $(du -sh "$out" | cut -f1) in $out (exit $rc)"
exit $rc
