#!/usr/bin/env bash
# The seed suites on an AMD MI300X, for the first AMD user: one command.
#   ./setup.sh --install-only                       # the AMD set (rocm-smi or /dev/kfd found)
#   bash scripts/amd-campaign.sh OUTDIR [KBDIR]      # hours; resumable (sweeps keep their cells)
#   bash scripts/amd-campaign.sh --dry-run OUTDIR [KBDIR]   # the plan, the commands, the checks; runs nothing
# KBDIR is a KernelBench checkout (KernelBench/level1, level2); without it
# the KernelBench step is left out and said so. Steps, each on --device rocm:
#   doctor; GEMM square+llm (bfloat16, float32) on burnstyle-hip (hipBLASLt),
#   burnstyle-hip/rocblas (rocBLAS), pytorch, triton, jax, iree; attention llm
#   (bfloat16); KernelBench baselines in KernelBench's per-hardware format
#   (OUTDIR/timing/MI300X_xbench/); TTT 125m (linear, mlp); a report per suite.
# NEVER RUN ON AN AMD CARD: written and dry-run on a CPU machine only (CI
# asserts the dry run: plugins/_python/tests/test_amd_campaign.py).
set -uo pipefail
cd "$(dirname "$0")/.."
dry=0
[ "${1:-}" = "--dry-run" ] && { dry=1; shift; }
[ $# -ge 1 ] || { echo "usage: $0 [--dry-run] OUTDIR [KBDIR]" >&2; exit 2; }
out=$1 kb=${2:-}
X=bin/xbench D=rocm hw=MI300X_xbench
gemm_backends=burnstyle-hip,burnstyle-hip/rocblas,pytorch,triton,jax,iree
attn_backends=burnstyle-hip,pytorch,triton,jax,iree
ttt_backends=burnstyle-hip,pytorch,triton,jax

# The plan: one step a line, NAME|SECONDS|COMMAND (run by bash -c).
plan() {
  echo "doctor|600|$X doctor --start-timeout 300s"
  for t in bfloat16 float32; do
    echo "verify gemm $t|900|$X verify --workload gemm --device $D --backends $gemm_backends --dtype $t"
  done
  echo "sweep gemm square+llm|43200|$X sweep --workload gemm --device $D --backends $gemm_backends --dtype bfloat16,float32 --shapes square,llm --timeout 120s --results $out/gemm"
  echo "verify attention|900|$X verify --workload attention --device $D --backends $attn_backends --dtype bfloat16"
  echo "sweep attention llm|21600|$X sweep --workload attention --device $D --backends $attn_backends --dtype bfloat16 --shapes llm --timeout 300s --results $out/attention"
  if [ -n "$kb" ]; then
    echo "kernelbench baselines|21600|$X problems baseline --problems $kb/KernelBench --level 1,2 --device $D --hardware $hw --out $out/timing/$hw --results $out/kernelbench"
  fi
  for t in linear mlp; do
    echo "verify ttt $t|900|$X verify --device $D --backends $ttt_backends --model-size tiny --ttt-type $t"
  done
  echo "sweep ttt 125m|14400|$X sweep --device $D --backends $ttt_backends --model-size 125m --ttt-type linear,mlp --seq-len 2048 --results $out/ttt"
  for s in gemm attention ttt; do
    echo "report $s|600|$X report --results $out/$s --out $out/report-$s.html"
  done
}

# The environment checks: each prints ok or FAIL with what to do.
checks() {
  local bad=0 m
  m=$(PYTHONPATH=plugins/_python python3 -m xbench_py.environment machine 2>&1)
  case "$m" in amd*) echo "ok   machine: $m";; *) echo "FAIL machine: $m (want amd: rocm-smi or /dev/kfd; XBENCH_MACHINE=amd to force)"; bad=1;; esac
  if [ -x "$X" ]; then echo "ok   $X built"; else echo "FAIL $X missing: ./setup.sh --install-only"; bad=1; fi
  if [ -x .venv/bin/python ] && PYTHONPATH=plugins/_python .venv/bin/python -m xbench_py.environment check --machine amd >/tmp/amd-check.$$ 2>&1; then
    echo "ok   frameworks: the AMD set (xbench_py.environment check --machine amd)"
  else
    echo "FAIL frameworks of .venv against the AMD set (./setup.sh installs it):"; sed 's/^/       /' /tmp/amd-check.$$ 2>/dev/null; bad=1
  fi
  rm -f /tmp/amd-check.$$
  if [ -z "$kb" ]; then echo "skip KernelBench: no KBDIR given (a KernelBench checkout)"
  elif [ -d "$kb/KernelBench/level1" ]; then echo "ok   KernelBench at $kb"
  else echo "FAIL KBDIR $kb has no KernelBench/level1"; bad=1; fi
  return $bad
}

echo "amd campaign: OUTDIR $out${kb:+, KernelBench $kb}"
echo "environment checks:"
checks; ok=$?
echo "plan ($(plan | wc -l) steps, each bounded by its seconds):"
plan | awk -F'|' '{printf "  %2d. %s (%ss)\n      %s\n", NR, $1, $2, $3}'
if [ $dry -eq 1 ]; then echo "dry run: nothing run"; exit 0; fi
[ $ok -eq 0 ] || { echo "amd campaign: environment checks failed (above); nothing run" >&2; exit 2; }

mkdir -p "$out"
start=$(date +%s) deadline=${DEADLINE:-259200} log="$out/amd-campaign.log"
. scripts/device-step.sh
while IFS='|' read -r name secs cmd; do
  step "$name" "$secs" bash -c "$cmd"
done < <(plan)
echo "=== summary" | tee -a "$log"; grep -E '^=== .*: exit|^=== SKIP' "$log"
exit $(( fails > 0 ))
