#!/usr/bin/env bash
# One device lease: what the H100 run does, in order. Built here (no Go on
# the device machine) with:
#   CGO_ENABLED=0 go test -c -o bin/gpu/gputest ./plugins/burnstyle-hip/gpu
#   CGO_ENABLED=0 go build -o bin/gpu/gpucheck ./plugins/burnstyle-hip/gpu/cmd/gpucheck
# and run there as: bash plugins/burnstyle-hip/gpu/device_run.sh [gpucheck flags]
set -uo pipefail
OUT=${OUT:-/tmp/gpuout}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,utilization.gpu,memory.used \
  --format=csv 2>&1 | tee "$OUT/smi.txt"
ls -d /usr/local/cuda*/targets/*/lib 2>/dev/null | head -3
echo "== unit tests on the GPU (XBENCH_REQUIRE_GPU=1)"
XBENCH_REQUIRE_GPU=1 timeout 120 bin/gpu/gputest -test.v -test.count=1 \
  -test.run 'TestGPU|TestOpenWithoutGPU|TestSymbol|TestMissing|TestCandidates|TestSource|TestShared|TestPick' 2>&1 \
  | tee "$OUT/gputest.log" | grep -E '^(---|ok|FAIL|PASS)|gpu_test' 
echo "== gpucheck $*"
timeout 250 bin/gpu/gpucheck -json "$OUT/gpucheck.json" "$@" 2>&1 | tee "$OUT/gpucheck.log"
