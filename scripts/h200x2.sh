#!/usr/bin/env bash
# Issue 3's multi-GPU check on a machine with 2 GPUs: the same sweep with one
# worker (--gpus 0) and with two (--gpus 0,1), wall time of each, and the
# speed-up. Native backend cells: from 125m to 350m, so each cell does real
# GPU work and the run fits one device call.
#   DEADLINE=280 R=results/<new folder> bash scripts/h200x2.sh OUTDIR
set -uo pipefail
out=${1:-/tmp/x2-out}
X=bin/xbench
R=${R:-results/h200x2} # committed and packed: a rerun names a new folder
mkdir -p "$out"
nvidia-smi -L
cells="--backends burnstyle-hip --device cuda --model-size 125m,350m --seq-len 1024,2048 --ttt-type linear,mlp --dtype float32,bfloat16 --warmup 1 --repeats 5"
for gpus in 0 0,1; do
  dir="$R/gpus-${gpus/,/-}"
  t0=$(date +%s.%N)
  timeout -k 5 70 $X sweep $cells --gpus "$gpus" --results "$dir" 2>&1 | tail -3
  t1=$(date +%s.%N)
  echo "gpus=$gpus wall_s=$(awk "BEGIN{print $t1 - $t0}")" | tee -a "$out/x2.txt"
  $X sweep --results "$dir" --status 2>&1 | tee -a "$out/x2.txt"
done
$X sweep --results "$R/gpus-0-1" --csv | cut -d, -f1-13 > "$out/x2.csv"
tar czf "$out/results.tgz" "$R"
