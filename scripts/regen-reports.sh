#!/usr/bin/env bash
# Makes the H100 reports under docs/ (committed: the results narratives
# link them) from the committed campaign archives in results/ with
# bin/xbench (no GPU needed): the same
# commands each results narrative in docs/results/ names, the same bytes
# each time. Usage: [XBENCH=binary] scripts/regen-reports.sh [OUTROOT]
# (default docs; another folder writes docs' layout there, for a diff).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs}
xb=${XBENCH:-bin/xbench}
status=0
gen() { # name, then the report's flags
  local name=$1; shift
  mkdir -p "$out/$name"
  rm -f "$out/$name"/report*
  local t0=$SECONDS
  if "$xb" report "$@" --out "$out/$name/report.html" >/dev/null; then
    printf '%-16s %4ds %8s\n' "$name" $((SECONDS - t0)) "$(du -sh "$out/$name" | cut -f1)"
  else
    printf '%-16s FAILED\n' "$name"; status=1
  fi
}
gen h100 --results results/h100-table --baseline jax
gen h100-attention --results results/h100-attention/sweep --verify results/h100-attention/verify \
  --calibration results/h100-gemm/20261123T091750Z-91b8961b/_calibration.json
gen h100-iree --results results/h100-iree/gemm
gen h100-iree-attention --results results/h100-iree/attention-llm --verify results/h100-iree/verify \
  --verify results/h100-attention/verify --calibration results/h100-gemm/20261123T091750Z-91b8961b/_calibration.json
# The GEMM suites: the whole sweep on one clock (issue 31); results/h100-gemm,
# the serial sweep of 2026-11-23/24 with jax on the host clock, has no report.
gen h100-gemm --results results/h100-sweep-15/sweep --verify results/h100-sweep-15/verify \
  --calibration results/h100-gemm/20261123T091750Z-91b8961b/_calibration.json
gen h100-scan --results results/h100-scan --baseline flash-semicrf
exit $status
