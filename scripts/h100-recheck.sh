#!/usr/bin/env bash
# After a refactor of the native backend (issue 44: the root package split,
# one mode value, one BLASLt plan and binder, one workload table), every
# workload of burnstyle-hip verified on the H100 against the float64
# reference, then the candidates' gate on CUDA (poisoned free blocks, the
# event timer with a device-wide synchronize), then the headline numbers
# timed once beside their peers. One device call, most important first:
#   ./setup.sh --install-only                      # bin/ (static, CGO_ENABLED=0)
#   mkdir -p .devbin && gzip -c bin/xbench >.devbin/xbench.gz && gzip -c bin/burnstyle-hip >.devbin/burnstyle-hip.gz
#   (carry .devbin and .whl, which holds cupti-python 13.0 for cp312 as in
#   scripts/lib-cupti.sh: the binaries and the tree together pass the 64 MiB a call
#   may carry, compressed they do not)
#   DEADLINE=560 bash scripts/h100-recheck.sh OUTDIR
# CANDS=DIR adds every *.py there as a level1/1 candidate, each its own run
# (held-out cheats kept out of the repository). STEPS="a,b" runs only the
# steps whose name contains one of the words. The held-out files named
# gpu_* go first.
set -uo pipefail
out=${1:-/tmp/h100-recheck-out}
deadline=${DEADLINE:-560}
X=${XBENCH:-bin/xbench}
R=${R:-results/h100-recheck}
mkdir -p "$out" "$R" bin
if [ -d .devbin ]; then
  for f in .devbin/*.gz; do gunzip -c "$f" >"bin/$(basename "$f" .gz)" && chmod +x "bin/$(basename "$f" .gz)"; done
fi
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
export XBENCH_GIT_COMMIT=${XBENCH_GIT_COMMIT:-$(cat bin/COMMIT 2>/dev/null || git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
start=$(date +%s)
log="$out/h100-recheck.log"
: >"$log"
. "$(dirname "$0")/device-step.sh"
. "$(dirname "$0")/lib-cupti.sh"
install_cupti > "$log.cupti" 2>&1; cat "$log.cupti" | tee -a "$log"  # the Python backends' device clock (carry .whl); not in a pipe: it exports PYTHONPATH

step machine 15 sh -c 'nvidia-smi -L; nproc; ls -la bin/'
# 1. correctness of every native path after the refactor
gv="--workload gemm --device cuda --m 1000 --n 1100 --k 1200 --results $R/verify --timeout 60s"
step "verify gemm float32 nt" 60 $X verify $gv --layout nt --dtype float32 --backends burnstyle-hip,burnstyle-hip/cublaslt,pytorch
step "verify gemm bfloat16 tn batch 2" 60 $X verify --workload gemm --device cuda --batch 2 --m 300 --n 200 --k 500 --layout tn \
  --dtype bfloat16 --backends burnstyle-hip,burnstyle-hip/cublaslt,pytorch --results "$R/verify" --timeout 60s
av="--workload attention --device cuda --dtype bfloat16 --results $R/verify --timeout 100s"
step "verify attention forward" 60 $X verify $av --backends burnstyle-hip,pytorch
step "verify attention backward d64 causal" 60 $X verify $av --head-dim 64 --seq-len 200 --causal true --phase backward --backends burnstyle-hip,pytorch
sv="--workload scan --device cuda --results $R/verify --timeout 100s"
step "verify scan log forward" 60 $X verify $sv --backends burnstyle-hip,pytorch
step "verify scan log backward" 60 $X verify $sv --phase backward --backends burnstyle-hip,pytorch
tv="--device cuda --model-size 125m --seq-len 128 --ttt-type linear --dtype float32 --results $R/verify --timeout 200s"
step "verify ttt linear forward" 90 $X verify $tv --backends burnstyle-hip,pytorch
# 2. the candidates' gate on CUDA: right, wrong, then each held-out file
for kind in right wrong; do
  step "candidates $kind" 90 $X problems candidates --candidates "problems/candidates/$kind" --device cuda --level 1 \
    --repeats 10 --results "$R/candidates-$kind"
done
for f in ${CANDS:+$(ls "$CANDS"/gpu_*.py; ls "$CANDS"/*.py | grep -v /gpu_)}; do
  n=$(basename "$f" .py); d="$out/cand-$n/level1"; mkdir -p "$d"; cp "$f" "$d/1_square_matmul.py"
  step "candidate $n" 40 $X problems candidates --candidates "$out/cand-$n" --device cuda --level 1 --problem 1 \
    --repeats 10 --results "$R/held-$n"
done
# the training step's gradients at 125m
step "verify ttt linear backward" 150 $X verify $tv --phase backward --backends burnstyle-hip,pytorch
# 3. the headline numbers, timed once beside their peers
step "run gemm bfloat16 4096" 60 $X run --workload gemm --device cuda --m 4096 --n 4096 --k 4096 --dtype bfloat16 \
  --backends burnstyle-hip,burnstyle-hip/cublaslt,pytorch --warmup 5 --repeats 20 --results "$R/run"
ref="--batch 1 --heads 32 --kv-heads 8 --seq-len 4096 --head-dim 128 --causal true --dtype bfloat16"
for phase in forward backward; do
  step "run attention reference $phase" 80 $X run --workload attention --device cuda $ref --phase "$phase" \
    --backends burnstyle-hip,pytorch/sdpa-cudnn,pytorch/sdpa-flash --warmup 3 --repeats 10 --timeout 60s --results "$R/run"
done
step "run ttt training step 125m" 120 $X run --phase backward --model-size 125m --ttt-type linear --dtype float32 --device cuda \
  --seq-len 2048 --batch 1 --mini-batch 16 --warmup 3 --repeats 10 --backends burnstyle-hip,triton --timeout 100s --results "$R/run"
echo "=== summary" | tee -a "$log"
python3 - "$R" <<'PY' 2>&1 | tee -a "$log"
import glob, json, statistics, sys
for p in sorted(glob.glob(sys.argv[1] + "/**/*.json", recursive=True)):
    if "/_" in p:
        continue
    try:
        r = json.load(open(p))
    except Exception:
        continue
    if not isinstance(r, dict) or "backend" not in r:
        continue
    s = r.get("samples_ms") or []
    med = f"{statistics.median(s):.4f} ms" if s else ""
    v = r.get("verify") or {}
    print(p[len(sys.argv[1]) + 1:].split("/")[0], r["backend"], r.get("status"), med,
          (r.get("env") or {}).get("timing", "")[:40], (r.get("message") or "")[:160], v.get("max_rel_err", ""))
PY
grep -E '^=== .*: exit|^=== SKIP' "$log"
tar czf "$out/results-recheck.tgz" "$R" 2>>"$log"
echo "=== done at t=$(( $(date +%s) - start ))s, $fails failed steps" | tee -a "$log"
