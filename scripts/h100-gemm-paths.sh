#!/usr/bin/env bash
# burnstyle-hip's gemm after its libraries became one gemmPath each
# (cuBLAS, cuBLASLt on cuda; hipBLASLt, rocBLAS on rocm): on the H100, the
# cuda paths must still verify against the float64 reference and time,
# plain, under --cuda-graph and --cold-cache, with env.versions naming
# cublas / cublaslt; the rocm variant must be answered unsupported on cuda.
#   bash scripts/h100-gemm-paths.sh OUTDIR      (about 2 minutes)
set -uo pipefail
out=${1:-${OUT:-/tmp/h100-gemm-paths}}
X=bin/xbench
R="$out/results"
mkdir -p "$R"
log="$out/h100-gemm-paths.log"
B=burnstyle-hip,burnstyle-hip/cublaslt
nvidia-smi -L 2>&1 | tee -a "$log"
step() { # step NAME CMD...: run with a 90 s box, keep the output, note the exit status
  local name=$1; shift
  echo "=== $name" | tee -a "$log"
  timeout -k 5 90 "$@" 2>&1 | tee -a "$log"
  echo "$name rc=${PIPESTATUS[0]}" >>"$out/status.txt"
}
step "verify float32 nt" $X verify --workload gemm --device cuda --m 1000 --n 1100 --k 1200 --layout nt --dtype float32 --backends $B --results "$R/verify"
step "verify bfloat16 tn batch 2" $X verify --workload gemm --device cuda --batch 2 --m 300 --n 200 --k 500 --layout tn --dtype bfloat16 --backends $B --results "$R/verify"
step "run bfloat16 4096^3" $X run --workload gemm --device cuda --m 4096 --n 4096 --k 4096 --dtype bfloat16 --backends $B --json --results "$R/run"
step "run --cuda-graph" $X run --workload gemm --device cuda --m 4096 --n 4096 --k 4096 --dtype bfloat16 --backends $B --cuda-graph --json --results "$R/graph"
step "run --cold-cache" $X run --workload gemm --device cuda --m 4096 --n 4096 --k 4096 --dtype bfloat16 --backends $B --cold-cache --json --results "$R/cold"
step "rocblas on cuda (want unsupported)" $X run --workload gemm --device cuda --m 64 --n 64 --k 64 --dtype float32 --backends burnstyle-hip/rocblas --json --results "$R/rocblas"
echo "=== summary" | tee -a "$log"
python3 - "$R" <<'PY' 2>&1 | tee -a "$log"
import glob, json, statistics, sys
print("%-10s %-24s %-12s %-10s %-12s %s" % ("folder", "backend", "status", "median ms", "library", "timing"))
for f in sorted(glob.glob(sys.argv[1] + "/**/*.json", recursive=True)):
    try:
        r = json.load(open(f))
    except Exception:
        continue
    if not isinstance(r, dict) or "backend" not in r:
        continue
    b = r["backend"] + ("/" + r["variant"] if r.get("variant") else "")
    s = r.get("samples_ms") or []
    v = r.get("env", {}).get("versions", {})
    lib = next((v[k] for k in ("cublaslt", "cublas", "hipblaslt", "rocblas") if k in v), "-")
    med = "%.4f" % statistics.median(s) if s else "-"
    print("%-10s %-24s %-12s %-10s %-12s %s" % (f.split("/")[-3] if "/verify/" not in f else "verify", b, r.get("status"), med,
          lib, (r.get("env", {}).get("timing") or r.get("message") or "")[:90]))
PY
cat "$out/status.txt" | tee -a "$log"
