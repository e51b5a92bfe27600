#!/usr/bin/env bash
# burnstyle-hip after its gpu package split by role (issue 27): a runtime
# package (driver, compilers, BLAS, graphs, the one timing loop) and one
# package per workload. This proves the split binary still runs each
# workload on the GPU and agrees with pytorch and the harness's references.
# Build here (no Go on the device; both static), carry bin/, run from the
# repository root:
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
#   bash scripts/h100-gpusplit-check.sh "$OUT"      # about 3 minutes, at most 4
# $1 gets gpusplit.log, one folder of result JSON per step under results/,
# and the summary at the log's end: every step "exit 0", every verify row
# pass for burnstyle-hip and pytorch (but burnstyle-hip's attention backward:
# "unsupported ... (supported: forward)", as before the split), and the ttt
# and gemm runs' burnstyle-hip rows with a cuda device and their medians.
# The same on the CPU, as a check of the script (tiny TTT, small shapes):
#   DEVICE=cpu bash scripts/h100-gpusplit-check.sh /tmp/gpusplit-cpu
set -uo pipefail
out=${1:-/tmp/h100-gpusplit-out}
deadline=${DEADLINE:-240}
device=${DEVICE:-cuda}
X=${XBENCH:-bin/xbench}
B=burnstyle-hip,pytorch
mkdir -p "$out/results"
start=$(date +%s)
log="$out/gpusplit.log"
: >"$log"
. "$(dirname "$0")/device-step.sh"

if [ "$device" = cpu ]; then # the CPU check: the smallest shapes
  size=tiny seq=64 big=256
else
  size=125m seq=128 big=4096
fi
res() { echo "--results $out/results/$1"; }

step machine 15 sh -c 'nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"; ls -la bin/; git rev-parse --short HEAD 2>/dev/null'
# ttt: the TTT package (forward, then the training step) against the
# harness's float64 reference and pytorch
step "verify ttt $size forward" 50 $X verify --device "$device" --model-size "$size" --seq-len "$seq" --backends "$B" $(res ttt)
step "verify ttt tiny backward" 40 $X verify --device "$device" --model-size tiny --phase backward --backends "$B" $(res ttt-bwd)
# gemm: cuBLAS through the runtime's BLAS binding, two dtypes and layouts
step "verify gemm float32 nn" 30 $X verify --workload gemm --device "$device" --m 1000 --n 1100 --k 1200 --dtype float32 --backends "$B" $(res gemm-f32)
step "verify gemm bfloat16 nt" 30 $X verify --workload gemm --device "$device" --m 1000 --n 1100 --k 1200 --layout nt --dtype bfloat16 --backends "$B" $(res gemm-bf16)
# attention: the NVRTC kernels' forward (GQA, causal, head_dim 40 at the
# verify defaults); burnstyle-hip has no attention backward, so there it
# must answer "unsupported" (saying so) while pytorch passes
step "verify attention forward" 30 $X verify --workload attention --device "$device" --dtype bfloat16 --causal true \
  --backends "$B" $(res attn)
step "verify attention backward" 30 $X verify --workload attention --device "$device" --dtype bfloat16 --phase backward \
  --backends "$B" $(res attn-bwd)
# scan: its NVRTC kernel, log and max semirings
step "verify scan log" 30 $X verify --workload scan --device "$device" --backends "$B" $(res scan)
step "verify scan max" 30 $X verify --workload scan --device "$device" --semiring max --backends "$B" $(res scan-max)
# timed runs through the runtime's timing loop: the TTT model's per-call
# samples (graph replays), then gemm 4096^3 bfloat16
step "run ttt $size" 60 $X run --device "$device" --model-size "$size" --seq-len "$seq" --backends burnstyle-hip \
  --warmup 3 --repeats 10 $(res run-ttt)
step "run gemm ${big}^3 bfloat16" 60 $X run --workload gemm --device "$device" --m "$big" --n "$big" --k "$big" --dtype bfloat16 \
  --backends "$B" --warmup 3 --repeats 10 $(res run-gemm)

# gemm 1024^3 bfloat16 on burnstyle-hip: the CUPTI span (a 5.5 us kernel;
# held events read ~8 us there, results/h100-clock)
step "run gemm 1024^3 bfloat16" 30 $X run --workload gemm --device "$device" --m 1024 --n 1024 --k 1024 --dtype bfloat16 \
  --backends "$B" --warmup 10 --repeats 30 --cold-cache=false $(res run-gemm1k)
# which clock each timed result got, and its median
python3 - "$out/results" <<'PY' | tee -a "$log"
import glob, json, os, statistics, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "run-*", "**", "*.json"), recursive=True)):
    r = json.load(open(f))
    if not isinstance(r, dict) or "samples_ms" not in r or not r["samples_ms"]:
        continue
    print(f"{r['backend']:<14} {os.path.basename(os.path.dirname(os.path.dirname(f))):<12} "
          f"median {statistics.median(r['samples_ms']):.4f} ms  {r['env'].get('timing', '')[:70]}")
PY

echo; echo "=== summary (fails: $fails, $(( $(date +%s) - start )) s)" | tee -a "$log"
{
  grep -E '^=== .*: exit|^=== SKIP' "$log"
  echo "--- result files"
  find "$out/results" -name '*.json' | sed "s|^$out/||" | sort
} | tee "$log.summary"
cat "$log.summary" >>"$log"
rm -f "$log.summary"
[ "$fails" -eq 0 ]
