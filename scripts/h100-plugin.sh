#!/usr/bin/env bash
# burnstyle-hip as a plugin binary of its own (issue 27), checked on the H100:
# every command that used to run it built into xbench now launches
# bin/burnstyle-hip, so each is run once on the GPU. Build here (no Go on the
# device), carry bin/, run from the repository root:
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
#   bash scripts/h100-plugin.sh "$OUT"        # about 3 minutes
# OUTDIR gets h100-plugin.log; the summary at its end must show exit 0 for
# every step, "plugin" as burnstyle-hip's runtime, pass for every verify row
# and a cuda device in the run table. The same on a CPU, as a check:
#   DEVICE=cpu SIZE=tiny SEQ=64 bash scripts/h100-plugin.sh /tmp/p
set -uo pipefail
out=${1:-/tmp/h100-plugin-out}
deadline=${DEADLINE:-420}
device=${DEVICE:-cuda}
size=${SIZE:-125m}
seq=${SEQ:-2048}
X=${XBENCH:-bin/xbench}
mkdir -p "$out"
start=$(date +%s)
log="$out/h100-plugin.log"
: >"$log"
res=$(mktemp -d)

. "$(dirname "$0")/device-step.sh"

step machine 15 sh -c 'nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"; ls -la bin/; git rev-parse --short HEAD 2>/dev/null'
# backends starts every backend (Python ones too) to ask what it supports
step backends 150 sh -c "$X backends | grep -E '^(backend|burnstyle-hip) '"
# the float64 reference is the harness's own now: burnstyle-hip's GPU path
# against it, forward and training step, and its kernels' workloads
step "verify ttt" 60 $X verify --backends burnstyle-hip --device "$device" --model-size tiny --results "$res"
step "verify ttt backward" 60 $X verify --backends burnstyle-hip --device "$device" --model-size tiny --phase backward --results "$res"
step "verify gemm" 40 $X verify --workload gemm --backends burnstyle-hip --device "$device" --results "$res"
step "run $size" 90 $X run --backends burnstyle-hip --device "$device" --model-size "$size" --seq-len "$seq" --repeats 5 --results "$res"
step profile 60 $X profile --backends burnstyle-hip --device "$device" --model-size "$size" --seq-len "$seq" --calls 2 --results "$res" --trace-dir "$res/traces"
step calibrate 60 $X calibrate --backends burnstyle-hip --device "$device" --results "$res"
rm -rf "$res"
echo; echo "=== summary" | tee -a "$log"
grep -E '^=== .*: exit' "$log" | tee -a "$log.summary"
cat "$log.summary" >>"$log"; rm -f "$log.summary"
