#!/usr/bin/env bash
# cuBLASLt (the burnstyle-hip/cublaslt variant: the fastest of the
# heuristic's top 8 algorithms, timed on the device and recorded) against
# burnstyle-hip's cuBLAS path over the gemm llm suite in bfloat16, on the
# H100, from the repository root with bin/xbench prebuilt:
#   bash scripts/h100-cublaslt.sh OUTDIR      (under 6 minutes)
# First a verify of the variant against the float64 reference, then the
# sweep (resumable: rerun to finish it if the time box cut it), then a
# table of median ratios (cublaslt / cublas; < 1: cuBLASLt faster) and the
# algorithms picked. Logs and the results tarball go to OUTDIR.
set -uo pipefail
out=${1:-/tmp/h100-cublaslt-out}
X=bin/xbench
R=${R:-results/h100-cublaslt}
mkdir -p "$out" "$R"
export XBENCH_GIT_COMMIT=$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
log="$out/h100-cublaslt.log"
start=$(date +%s)
echo "=== machine" | tee -a "$log"
{ nvidia-smi -L; nproc; } 2>&1 | tee -a "$log"
echo "=== verify (float32 nt, bfloat16 tn, batch 2)" | tee -a "$log"
timeout -k 5 60 $X verify --workload gemm --device cuda --m 1000 --n 1100 --k 1200 --layout nt --dtype float32 \
  --backends burnstyle-hip,burnstyle-hip/cublaslt --results "$R/verify" 2>&1 | tee -a "$log"
timeout -k 5 60 $X verify --workload gemm --device cuda --batch 2 --m 300 --n 200 --k 500 --layout tn --dtype bfloat16 \
  --backends burnstyle-hip,burnstyle-hip/cublaslt --results "$R/verify" 2>&1 | tee -a "$log"
left=$(( 330 - ($(date +%s) - start) ))
echo "=== sweep gemm llm bfloat16 (${left}s box)" | tee -a "$log"
timeout -k 5 "$left" $X sweep --workload gemm --device cuda --shapes llm --dtype bfloat16 \
  --backends burnstyle-hip,burnstyle-hip/cublaslt --warmup 3 --repeats 10 --timeout 60s --results "$R/sweep" 2>&1 \
  | grep -v '\.\.\.$' | tail -5 | tee -a "$log"
echo "=== summary" | tee -a "$log"
python3 - "$R/sweep" <<'PY' 2>&1 | tee -a "$log"
import collections, glob, json, math, re, statistics, sys
runs = collections.defaultdict(dict)
for f in glob.glob(sys.argv[1] + "/**/*.json", recursive=True):
    try:
        r = json.load(open(f))
    except Exception:
        continue
    if not isinstance(r, dict) or r.get("status") != "ok" or not r.get("samples_ms"):
        continue
    c = r["config"].get("params") or r["config"]  # schema 2 keeps the shape under params
    key = tuple(c.get(k) for k in ("m", "n", "k", "batch", "layout", "dtype"))
    runs[key][r["backend"]] = (statistics.median(r["samples_ms"]), r.get("env", {}).get("timing", ""))
pairs = [(k, v["burnstyle-hip"], v["burnstyle-hip/cublaslt"]) for k, v in runs.items()
         if "burnstyle-hip" in v and "burnstyle-hip/cublaslt" in v]
if not pairs:
    print("no configuration has both results"); sys.exit(0)
ratios = [lt[0] / bl[0] for _, bl, lt in pairs]
print(f"{len(pairs)} shapes with both; cublaslt/cublas median ratio: geomean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}, "
      f"median {statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}; "
      f"cuBLASLt faster by >3% on {sum(r < 0.97 for r in ratios)}, slower by >3% on {sum(r > 1.03 for r in ratios)}")
print(f"{'m':>6} {'n':>6} {'k':>6}  {'cublas ms':>10} {'cublaslt ms':>11} {'ratio':>6}  picked")
for (m, n, k, *_), bl, lt in sorted(pairs, key=lambda p: p[2][0] / p[1][0])[:12] + sorted(pairs, key=lambda p: p[2][0] / p[1][0])[-8:]:
    pick = re.search(r"heuristic result \d+ of \d+ \(algo id \d+, tile \d+, split-k -?\d+, stages \d+", lt[1])
    print(f"{m:>6} {n:>6} {k:>6}  {bl[0]:>10.4f} {lt[0]:>11.4f} {lt[0] / bl[0]:>6.3f}  {pick.group(0) if pick else '?'}")
ranks = collections.Counter(re.search(r"heuristic result (\d+) of", lt[1]).group(1) for _, _, lt in pairs if "heuristic result" in lt[1])
print("heuristic rank picked (1 = cuBLASLt's own first choice):", dict(sorted(ranks.items(), key=lambda x: int(x[0]))))
PY
$X sweep --results "$R/sweep" --status 2>&1 | tail -3 | tee -a "$log"
tar czf "$out/results-cublaslt.tgz" "$R"
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
