#!/usr/bin/env bash
# One device lease: what the H100 run does, in order. Built here (no Go on
# the device machine) with:
#   CGO_ENABLED=0 go test -c -o bin/gpu/gputest ./plugins/burnstyle-hip/gpu
#   CGO_ENABLED=0 go test -c -o bin/gpu/ttttest ./plugins/burnstyle-hip/gpu/ttt
#   CGO_ENABLED=0 go build -o bin/gpu/gpucheck ./plugins/burnstyle-hip/tools/gpucheck
# and run there as: bash plugins/burnstyle-hip/tools/device_run.sh [gpucheck flags]
set -uo pipefail
OUT=${OUT:-/tmp/gpuout}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,utilization.gpu,memory.used \
  --format=csv 2>&1 | tee "$OUT/smi.txt"
ls -d /usr/local/cuda*/targets/*/lib 2>/dev/null | head -3
echo "== unit tests on the GPU (XBENCH_REQUIRE_GPU=1)"
# the runtime's (library loading) and the TTT package's (its GPU test, its
# program's sources and shared-memory sizes)
{
  XBENCH_REQUIRE_GPU=1 timeout 60 bin/gpu/gputest -test.v -test.count=1 \
    -test.run 'TestOpenWithoutGPU|TestSymbol|TestMissing|TestCandidates'
  XBENCH_REQUIRE_GPU=1 timeout 120 bin/gpu/ttttest -test.v -test.count=1 -test.run 'TestGPU|TestSource|TestShared|TestPick'
} 2>&1 | tee "$OUT/gputest.log" | grep -E '^(---|ok|FAIL|PASS)|_test' 
echo "== gpucheck $*"
timeout 250 bin/gpu/gpucheck -json "$OUT/gpucheck.json" "$@" 2>&1 | tee "$OUT/gpucheck.log"
if [ -x bin/gpu/xbench ]; then
  echo "== the backend through the harness CLI (bin/gpu/xbench)"
  for t in linear mlp; do for dt in float32 bfloat16; do
    timeout 60 bin/gpu/xbench verify --device cuda --backends burnstyle-hip --ttt-type $t --dtype $dt --results "$OUT/results" 2>&1 | tail -4
  done; done
  for args in "--dtype float32" "--dtype bfloat16" "--dtype float32 --inner-only" "--dtype bfloat16 --inner-only"; do
    timeout 60 bin/gpu/xbench run --backends burnstyle-hip --device cuda --model-size 125m $args --repeats 20 \
      --results "$OUT/results" 2>&1 | tail -3
  done
fi
