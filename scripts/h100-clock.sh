#!/usr/bin/env bash
# The clock cross-check of issue 31 on the GPU machine, from the repository
# root, about 4 minutes (each step has its own limit, all within DEADLINE
# seconds, default 450):
#   DEADLINE=450 bash scripts/h100-clock.sh OUTDIR
# Needs bin/xbench (CGO_ENABLED=0) and the cupti-python wheel in .whl/
# (cupti_python-13.0.1-cp312-*.whl: it uses the libcupti of torch's
# nvidia-cuda-cupti wheel; without it every clock falls back, labelled, and
# the table shows it).
# The same vendor kernel through every framework, on the protocol's clock
# (docs/protocol.md, "What one sample is"): cuBLAS GEMM bf16 at 1024^3,
# 4096^3, 8192^3 through pytorch, jax (XLA's Triton GEMM turned off) and
# burnstyle-hip (its Go side reads CUPTI's records too: plugins/burnstyle-hip/cupti), and cuDNN's attention forward b4 h32/8 s4096 d128 causal
# bf16 through pytorch/sdpa-cudnn and jax/cudnn, one process per framework;
# the table must say PASS (every case within 5%). Then the overhead lines: a
# null call, the 4096^3 GEMM with tracing on and off, and a launch-bound
# scan (which clock calibrate() picked for it).
set -uo pipefail
out=${1:-/tmp/h100-clock}
mkdir -p "$out"
log="$out/h100-clock.log"
exec > >(tee -a "$log") 2>&1
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
PY=${PY:-python3}
X=bin/xbench
start=$(date +%s)
t() { echo "[t=$(( $(date +%s) - start ))s] $*"; }
deadline=${DEADLINE:-450}
# lim N: N seconds, or what is left of the deadline (less 20 s for the table) if that is less.
lim() { local left=$(( deadline - ($(date +%s) - start) - 20 )); [ "$left" -lt 5 ] && left=5; echo $(( $1 < left ? $1 : left )); }

# cupti-python, where carried (scripts/lib-cupti.sh).
. scripts/lib-cupti.sh
t "install cupti-python"; install_cupti

rm -f "$out"/{pytorch,jax,jax-xla,burnstyle-hip,burnstyle-hip-events,burnstyle-hip-nohold}.jsonl
t "burnstyle-hip"
for n in 1024 4096 8192; do
  timeout -k 5 $(lim 60) $X run --workload gemm --backends burnstyle-hip --device cuda --m $n --n $n --k $n \
    --dtype bfloat16 --layout nn --warmup 10 --repeats 30 --cold-cache=false --json --results "$out/xbench" \
    | grep '^{' >> "$out/burnstyle-hip.jsonl" || echo "burnstyle-hip gemm $n exited $?"
done
for fw in pytorch jax; do
  t "framework $fw"
  timeout -k 5 $(lim 150) $PY scripts/clock_crosscheck.py --framework $fw --out "$out" || echo "$fw cross-check exited $?"
done
t "jax with XLA's own GEMM choice (shown, not asserted)"
timeout -k 5 $(lim 90) $PY scripts/clock_crosscheck.py --framework jax --xla-choice --out "$out" || echo "jax-xla exited $?"
t "burnstyle-hip on CUDA events instead of CUPTI records, held and not (shown, not asserted)"
for n in 1024 4096; do
  XBENCH_BURNSTYLE_CUPTI=0 timeout -k 5 $(lim 60) $X run --workload gemm --backends burnstyle-hip --device cuda --m $n --n $n --k $n \
    --dtype bfloat16 --layout nn --warmup 10 --repeats 30 --cold-cache=false --json --results "$out/xbench-events" \
    | grep '^{' >> "$out/burnstyle-hip-events.jsonl" || echo "burnstyle-hip events gemm $n exited $?"
  XBENCH_BURNSTYLE_CUPTI=0 XBENCH_BURNSTYLE_HOLD=0 timeout -k 5 $(lim 60) $X run --workload gemm --backends burnstyle-hip --device cuda --m $n --n $n --k $n \
    --dtype bfloat16 --layout nn --warmup 10 --repeats 30 --cold-cache=false --json --results "$out/xbench-nohold" \
    | grep '^{' >> "$out/burnstyle-hip-nohold.jsonl" || echo "burnstyle-hip nohold gemm $n exited $?"
done
t "table"
$PY scripts/clock_table.py "$out" | tee "$out/table.txt"
rc=${PIPESTATUS[0]}
t "done (table rc=$rc)"
exit $rc
