#!/usr/bin/env bash
# Issue 29, batch dispatch: the gemm llm suite (200 shapes, layout nt,
# bfloat16) on pytorch and burnstyle-hip, swept with --cells-per-call 1 (one
# round trip a cell, the old path) and --cells-per-call 16 (RunBatch), each
# into its own folder, after a short warm-up sweep; prints the wall times,
# the cells per minute, and how the two runs' medians compare cell by cell
# (the speed-up must come from the harness, not from changed numbers).
# About 150 s on the H100 (three runs of 400 cells at ~500 cells a minute, plus
# starts); at most 210 s: the warm-up gets 30 s and each run LIMIT (60) s, a
# run cut short reporting its cells a minute over what it finished. From the
# repository root with bin/xbench and bin/burnstyle-hip built:
#   bash scripts/h100-batch.sh OUTDIR
# SHAPES, DTYPES, BACKENDS override the suite (e.g. SHAPES=square).
set -uo pipefail
out=${1:-/tmp/h100-batch-out}
X=${XBENCH:-bin/xbench}
SHAPES=${SHAPES:-llm}
DTYPES=${DTYPES:-bfloat16}
B=${BACKENDS:-pytorch,burnstyle-hip}
LIMIT=${LIMIT:-60} # seconds a measured sweep may take
mkdir -p "$out"
export PYTHONUNBUFFERED=1
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
log="$out/h100-batch.log"
: > "$log"
# The device clock (CUPTI) for pytorch as in the sweeps: on CUDA events a
# 10 us GEMM reads 30-140 us with CVs up to 0.5, which hides any change.
. "$(dirname "$0")/lib-cupti.sh"
install_cupti > "$log.cupti" 2>&1; cat "$log.cupti" >> "$log"  # not in a pipe: it exports PYTHONPATH
common=(sweep --workload gemm --device cuda --shapes "$SHAPES" --dtype "$DTYPES" --backends "$B"
  --warmup 3 --repeats 10 --timeout 60s --cold-cache=false)
nvidia-smi -L 2>&1 | tee -a "$log"

# sweep NAME SECONDS PER-CALL [ARGS...]: one sweep into $out/NAME, its wall
# time (start to exit, backend starts included) in $out/NAME.wall.
sweep() {
  local name=$1 limit=$2 per=$3; shift 3
  rm -rf "${out:?}/$name"
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout -k 5 "$limit" $X "${common[@]}" --cells-per-call "$per" --results "$out/$name" "$@" > "$out/$name.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{printf "%.2f\n", $2 - $1}' > "$out/$name.wall"
  echo "=== $name (--cells-per-call $per): exit $rc after $(cat "$out/$name.wall") s; $(grep -m1 'cells have a file' "$out/$name.log")" | tee -a "$log"
}

sweep warm 30 16 --shard 0/20 # imports, the GPU's clocks, the page cache: not measured
sweep percell "$LIMIT" 1
sweep batch16 "$LIMIT" 16
sweep percell2 "$LIMIT" 1 # the one-at-a-time path again: the run-to-run spread the batch is judged against

python3 - "$out" <<'EOF' 2>&1 | tee -a "$log"
import glob, json, os, statistics, sys
out = sys.argv[1]

def cells(name):
    res = {}
    for p in glob.glob(os.path.join(out, name, "*.json")):
        if os.path.basename(p).startswith("_"):
            continue
        with open(p) as f:
            r = json.load(f)
        res[os.path.basename(p)] = r
    return res

runs = {n: cells(n) for n in ("percell", "batch16", "percell2")}
print(f"{'run':10} {'cells':>6} {'ok':>5} {'wall s':>8} {'cells/min':>10} {'in a batch':>11}")
for n, rs in runs.items():
    wall = float(open(os.path.join(out, n + ".wall")).read())
    ok = sum(r["status"] == "ok" for r in rs.values())
    batched = sum((r.get("env", {}).get("settings") or {}).get("dispatch", "").startswith("batch of") for r in rs.values())
    print(f"{n:10} {len(rs):6d} {ok:5d} {wall:8.1f} {60 * len(rs) / wall if wall else 0:10.0f} {batched:11d}")
def compare(new, old):
    by = {}
    for k, a in runs[old].items():
        b = runs[new].get(k)
        if b and a["status"] == b["status"] == "ok":
            by.setdefault(a["backend"], []).append(b["stats"]["median_ms"] / a["stats"]["median_ms"])
    for be, rs in sorted(by.items()):
        off = sum(abs(r - 1) > 0.03 for r in rs)
        print(f"{new}/{old} {be:14} {len(rs)} ok cells: median {statistics.median(rs):.4f} "
              f"(min {min(rs):.3f}, max {max(rs):.3f}; {off} differ by more than 3%)")

compare("batch16", "percell")
compare("percell2", "percell")
EOF
tar czf "$out/h100-batch-results.tgz" -C "$out" percell batch16 percell2 2>>"$log" && rm -rf "${out:?}"/percell "$out"/batch16 "$out"/percell2 "$out"/warm
