#!/usr/bin/env bash
# The GEMM `square` suite timed warm and with --cold-cache (issue 18), on
# the H100, for pytorch, jax, triton and burnstyle-hip, into
# results/h100-coldcache/{warm,cold}, then one table of cold/warm median
# ratios per backend and shape. Run from the repository root on the GPU
# machine with a static bin/xbench built beforehand:
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
#   DEADLINE=560 bash scripts/h100-coldcache.sh OUTDIR
# The sweeps are resumable: a second call finishes them (STEPS=warm,cold,...).
# The same script on a CPU, end to end with tiny shapes (what CI-less
# checking before a GPU run looks like):
#   DEVICE=cpu SHAPES=scripts/testdata/tiny-shapes.csv R=/tmp/cc bash scripts/h100-coldcache.sh /tmp/cc-out
set -uo pipefail
out=${1:-/tmp/h100-coldcache-out}
deadline=${DEADLINE:-560}
device=${DEVICE:-cuda}
shapes=${SHAPES:-square}
dtypes=${DTYPES:-bfloat16}
X=${XBENCH:-bin/xbench}
R=${R:-results/h100-coldcache}
mkdir -p "$out" "$R"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)}
all=pytorch,jax,triton,burnstyle-hip
start=$(date +%s)
log="$out/h100-coldcache.log"
: >"$log"

# step NAME SECONDS CMD...: as in scripts/h100-gemm.sh.
step() {
  local name=$1 want=$2; shift 2
  if [ -n "${STEPS:-}" ] && ! echo ",$STEPS," | grep -qF ",$name,"; then return; fi
  local left=$(( deadline - ($(date +%s) - start) - 15 ))
  if [ "$left" -lt 30 ]; then echo "=== SKIP $name: ${left}s left" | tee -a "$log"; return; fi
  [ "$want" -gt "$left" ] && want=$left
  echo; echo "=== $name (limit ${want}s, t=$(( $(date +%s) - start ))s)" | tee -a "$log"
  timeout -k 5 "$want" "$@" 2>&1 | grep -v '^\[.*\] .*: .* \.\.\.$' | tee -a "$log"
}

sweep=($X sweep --workload gemm --device "$device" --backends "$all" --dtype "$dtypes" --shapes "$shapes"
  --warmup 3 --repeats 20 --timeout 120s)

[ "$device" = cuda ] && step machine 15 sh -c 'nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv'
# Interleaved halves would share one process's caches and clocks; two
# sweeps, each with fresh backend processes, keep the modes apart.
step warm 260 "${sweep[@]}" --cold-cache=false --results "$R/warm"
step cold 260 "${sweep[@]}" --results "$R/cold" --cold-cache
for m in warm cold; do
  $X sweep --results "$R/$m" --status 2>&1 | tee -a "$log"
  $X sweep --results "$R/$m" --csv >"$out/$m.csv" 2>>"$log"
done
# cold/warm per backend and shape (compare refuses mixed modes by design).
python3 - "$out/warm.csv" "$out/cold.csv" <<'PY' 2>&1 | tee "$out/coldcache.txt" | tee -a "$log"
import csv, math, sys
def rows(p):
    return {(r["backend"], r["m"], r["dtype"]): r for r in csv.DictReader(open(p)) if r["status"] == "ok"}
warm, cold = rows(sys.argv[1]), rows(sys.argv[2])
print(f"{'backend':14} {'dtype':9} {'m=n=k':>6} {'warm ms':>10} {'cold ms':>10} {'cold/warm':>9}")
by = {}
for k in sorted(warm.keys() & cold.keys(), key=lambda k: (k[0], k[2], int(k[1]))):
    w, c = float(warm[k]["median_ms"]), float(cold[k]["median_ms"])
    by.setdefault((k[0], k[2], "small" if int(k[1]) <= 1024 else "large"), []).append(c / w)
    print(f"{k[0]:14} {k[2]:9} {k[1]:>6} {w:10.4f} {c:10.4f} {c / w:9.3f}")
print("\ngeometric mean cold/warm: small = m<=1024, large = m>1024")
for (b, d, size), rs in sorted(by.items()):
    print(f"{b:14} {d:9} {size:5} {math.exp(sum(map(math.log, rs)) / len(rs)):.3f} over {len(rs)} shapes")
missing = sorted(set(warm) ^ set(cold))
if missing:
    print(f"\n{len(missing)} cells ok in one mode only: {missing[:8]}")
PY
tar czf "$out/results-coldcache.tgz" "$R"
echo "=== done at t=$(( $(date +%s) - start ))s" | tee -a "$log"
