#!/usr/bin/env bash
# Issue 26 on the GPU: xbench's numbers beside KernelBench's own, on an
# unmodified KernelBench checkout (read, never copied into this repository).
#   bash scripts/h100-kernelbench.sh KBDIR OUTDIR [--device cpu] [--smoke]
# KBDIR holds KernelBench/level1, KernelBench/level2 (ids 1-20 at least) and
# results/timing/H100_Modal/baseline_time_torch.json, as a KernelBench clone
# does. From the repository root, with bin/xbench built (CGO_ENABLED=0). It
#  (a) times level1 and level2 ids 1-20 eagerly with `xbench problems
#      baseline` under --precision kernelbench (PyTorch's defaults, as
#      KernelBench times), and level2 again under strict-ieee;
#  (b) compares the eager means with the published baseline: a table with the
#      ratio per problem and the count within 6% (scripts/kernelbench_compare.py);
#  (c) gates and times xbench's own candidates for level1 19_ReLU and
#      20_LeakyReLU (problems/candidates/kernelbench) and scores them;
#  (d) runs an oversized problem and then a normal one in one `problems
#      baseline` run (scripts/testdata/oom-then-normal), after the normal one
#      alone: the second must be ok with its normal time.
# Writes OUTDIR/results/h100-kernelbench/{comparison.md, baseline files}
# (xbench's outputs only: commit that folder as results/h100-kernelbench),
# the sweeps, CSV exports, the log and OUTDIR/kernelbench.tgz. Takes about
# 4 minutes on an H100; every step is bounded so the whole stays under
# DEADLINE seconds (default 470).
# --smoke (with --device cpu) is the script's own test: three problems of
# KBDIR (level1 19 and 20, level2 1) with their sizes shrunk, in a copy
# under OUTDIR, 10 repeats; it checks the plumbing, not the numbers.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 KBDIR OUTDIR [--device cpu] [--smoke]" >&2; exit 2; }
kb=$(cd "$1" && pwd) || { echo "KBDIR $1 is not a folder" >&2; exit 2; }
out=$2
shift 2
device=cuda smoke=0
while [ $# -gt 0 ]; do
  case $1 in
    --device) device=${2:?--device needs a value}; shift 2 ;;
    --smoke) smoke=1; shift ;;
    *) echo "unknown argument $1 (allowed: --device DEV, --smoke)" >&2; exit 2 ;;
  esac
done
for f in KernelBench/level1 KernelBench/level2 results/timing/H100_Modal/baseline_time_torch.json; do
  [ -e "$kb/$f" ] || { echo "KBDIR $kb has no $f (want a KernelBench checkout)" >&2; exit 2; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
X=bin/xbench
PY=python3
[ -x .venv/bin/python ] && PY=.venv/bin/python
deadline=${DEADLINE:-470}
repeats=100 hw=H100_xbench problems="$kb/KernelBench" select=(--level 1,2 --max-problems 20)
export PYTHONUNBUFFERED=1
export XBENCH_GIT_COMMIT=$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
start=$(date +%s)
log="$out/kernelbench.log"
: > "$log"
fails=0

STEP_RESERVE=10 STEP_MIN=15
. "$(dirname "$0")/device-step.sh"  # step NAME SECONDS CMD...

# export_csv DIR FILE: the sweep's results as CSV (statistics recomputed from the samples on read).
export_csv=(sh -c '"$0" export --format csv "$1" > "$2"' "$X")

if [ "$smoke" = 1 ]; then
  # Shrunk copies of three problems, under OUTDIR only: the plumbing, fast.
  repeats=10 hw=cpu-smoke problems="$out/smoke-kb/KernelBench" select=(--level 1,2)
  rm -rf "$out/smoke-kb"
  mkdir -p "$problems/level1" "$problems/level2"
  for f in "$kb"/KernelBench/level1/19_*.py "$kb"/KernelBench/level1/20_*.py "$kb"/KernelBench/level2/1_*.py; do
    lv=$(basename "$(dirname "$f")")
    sed -E -e 's/^(batch_size *= *)[0-9]+/\12/' -e 's/^(dim *= *)[0-9]+/\11024/' \
      -e 's/^height = width = [0-9]+/height = width = 16/' "$f" > "$problems/$lv/$(basename "$f")"
  done
fi
common=(--device "$device" --warmup 3 --repeats "$repeats" --timeout 300s)

step machine 60 sh -c 'nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"; nproc; '"$X"' backends 2>&1 | grep -E "^(pytorch|candidates)"'
# (a) the 40 problems under KernelBench's convention, then level 2 under strict-ieee
step "baseline kernelbench (level1+2 ids 1-20, $repeats repeats)" 300 $X problems baseline --problems "$problems" \
  "${select[@]}" --backends pytorch --precision kernelbench --hardware "$hw" "${common[@]}" \
  --results "$out/sweep-baseline" --out "$out/timing"
step "export baseline" 30 "${export_csv[@]}" "$out/sweep-baseline" "$out/baseline.csv"
lv2=(--level 2 --max-problems 20)
[ "$smoke" = 1 ] && lv2=(--level 2)
step "baseline strict-ieee (level2)" 150 $X problems baseline --problems "$problems" "${lv2[@]}" \
  --backends pytorch --precision strict-ieee --hardware "$hw" "${common[@]}" \
  --results "$out/sweep-strict" --out "$out/timing"
# (c) xbench's candidates for 19_ReLU and 20_LeakyReLU: gate, time, score
step "candidates 19_ReLU 20_LeakyReLU" 120 $X problems candidates --candidates problems/candidates/kernelbench \
  --problems "$problems" --level 1 --problem 19,20 "${common[@]}" --results "$out/sweep-candidates"
step "export candidates" 30 "${export_csv[@]}" "$out/sweep-candidates" "$out/candidates.csv"
step "score vs xbench's baseline" 30 $X problems score --baseline "$out/timing/baseline_time_torch.json" \
  --results "$out/sweep-candidates"
if [ "$smoke" = 0 ]; then
  step "score vs KernelBench's published baseline" 30 $X problems score \
    --baseline "$kb/results/timing/H100_Modal/baseline_time_torch.json" --results "$out/sweep-candidates"
fi
# (d) a normal problem alone, then after an oversized one in one run
oom=(--problems scripts/testdata/oom-then-normal --level 1 --backends pytorch --hardware oomcheck "${common[@]}")
step "normal problem alone" 90 $X problems baseline "${oom[@]}" --problem 2 \
  --results "$out/sweep-oom-alone" --out "$out/oom-alone"
step "oversized then normal, one run" 120 $X problems baseline "${oom[@]}" --problem 0 \
  --results "$out/sweep-oom-pair" --out "$out/oom-pair"
step "export oom alone" 30 "${export_csv[@]}" "$out/sweep-oom-alone" "$out/oom-alone.csv"
step "export oom pair" 30 "${export_csv[@]}" "$out/sweep-oom-pair" "$out/oom-pair.csv"
# (b) the comparison table (xbench's outputs only)
dest="$out/results/h100-kernelbench"
[ "$smoke" = 1 ] && dest="$out/results/smoke"
step "compare with the published baseline" 30 $PY scripts/kernelbench_compare.py "$out" "$kb" "$dest" --problems "$problems"
echo "=== whole run: $(( $(date +%s) - start ))s, $fails failed steps" | tee -a "$log"
tar czf "$out/kernelbench.tgz" -C "$out" results timing kernelbench.log baseline.csv candidates.csv oom-alone.csv oom-pair.csv \
  sweep-baseline sweep-strict sweep-candidates sweep-oom-alone sweep-oom-pair 2>>"$log"
echo "=== wrote $out/kernelbench.tgz; commit $dest as results/h100-kernelbench"
grep -E '^summary:' "$log" || true
exit $(( fails > 0 ))
