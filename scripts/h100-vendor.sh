#!/usr/bin/env bash
# pytorch (torch.matmul) against burnstyle-hip (cuBLASLt) on large bfloat16
# GEMMs, where both call the vendor library (issue 11: "within 3% of each
# other"), interleaved: ROUNDS rounds, each running both backends on the
# same shapes, the order reversed every round (A B, B A, ...), so that the
# GPU's clock and power state, which drift over a minute of back-to-back
# GEMMs, fall on both alike. A sweep runs one backend's cells together and
# cannot give that. Results: results/h100-vendor/<layout>/round<i>/<run>;
# scripts/vendor_ratio.py turns them into the per-shape median ratio.
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
#   DEADLINE=300 bash scripts/h100-vendor.sh OUTDIR
# EXTRA="--cuda-graph" R=results/h100-vendor-graph times replays of each
# call captured as a CUDA graph: the library's kernels without either
# backend's per-call host dispatch.
# On a CPU, as a check of the script (tiny shapes, one round):
#   DEVICE=cpu ROUNDS=1 SQUARE=scripts/testdata/tiny-shapes.csv LLM=scripts/testdata/tiny-shapes.csv R=/tmp/v bash scripts/h100-vendor.sh /tmp/v-out
set -uo pipefail
out=${1:-/tmp/h100-vendor-out}
deadline=${DEADLINE:-300}
device=${DEVICE:-cuda}
rounds=${ROUNDS:-3}
square=${SQUARE:-scripts/testdata/vendor-square.csv}
llm=${LLM:-scripts/testdata/vendor-llm.csv}
X=${XBENCH:-bin/xbench}
R=${R:-results/h100-vendor}
extra=${EXTRA:-}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
start=$(date +%s)
log="$out/h100-vendor.log"
: >"$log"

. "$(dirname "$0")/device-step.sh"

[ "$device" = cuda ] && step machine 15 nvidia-smi -L
for i in $(seq 1 "$rounds"); do
  order="pytorch burnstyle-hip"
  [ $((i % 2)) = 0 ] && order="burnstyle-hip pytorch"
  for b in $order; do
    for set in "nn:$square" "nt:$llm"; do
      layout=${set%%:*} shapes=${set#*:}
      step "round $i $b $layout" 120 $X run --workload gemm --device "$device" --backends "$b" --dtype bfloat16 \
        --layout "$layout" --shapes "$shapes" --warmup 5 --repeats 20 --timeout 100s --results "$R/$layout/round$i" $extra
    done
  done
done
tar czf "$out/results-vendor.tgz" "$R" 2>>"$log"
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
