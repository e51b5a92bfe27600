#!/usr/bin/env bash
# Issue 29: does the compile-ahead wait shrink with more helper processes,
# or is the host already busy? The same 20 float32 jax cells (XLA autotunes
# its Triton GEMMs against cuBLASLt for each: ~13 s a cell on the H100, 80%
# of the whole sweep's compiling) compiled ahead from a cold cache by each
# helper count in HELPERS_LIST, with the host's CPU use sampled every 2 s.
#   bash scripts/h100-helpers-probe.sh OUTDIR     (~3 minutes)
set -uo pipefail
out=${1:-/tmp/h100-helpers-probe}
X=${XBENCH:-bin/xbench}
mkdir -p "$out"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || echo unknown)}
nproc | tee "$out/nproc"
# cpu busy % per 2 s from /proc/stat (all cores together)
( prev=""; while sleep 2; do cur=$(head -1 /proc/stat); if [ -n "$prev" ]; then
    echo "$prev" "$cur" | awk '{b1=$2+$3+$4+$7+$8; t1=b1+$5+$6; b2=$13+$14+$15+$18+$19; t2=b2+$16+$17; printf "%s busy %.0f%%\n", strftime("%T"), 100*(b2-b1)/(t2-t1)}'
  fi; prev=$cur; done ) > "$out/cpu.log" 2>&1 &
mon=$!
for h in ${HELPERS_LIST:-5 10}; do
  echo "=== helpers $h ($(date +%T))" | tee -a "$out/probe.log"
  $X sweep --workload gemm --device cuda --backends jax --dtype float32 --layout nt \
    --m 1024,2048 --n 4096,8192 --k 1024,2048,4096,8192,16384 --warmup 1 --repeats 3 --timeout 120s \
    --cold-cache=false --compile-ahead "$h" --compile-cache "$out/cc-$h" --results "$out/r-$h" 2>&1 \
    | grep -E "compil|sweep:" | tee -a "$out/probe.log"
  rm -rf "$out/cc-$h"
done
kill $mon
echo "=== cpu"; cat "$out/cpu.log"
