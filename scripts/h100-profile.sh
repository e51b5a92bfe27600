#!/usr/bin/env bash
# xbench profile on the H100 at 125m (issue 17): every backend under its own
# profiler, one step each so one that hangs or crashes costs only its own
# step. Run from the repository root on the GPU machine, with a static
# bin/xbench built beforehand:
#   CGO_ENABLED=0 go build -o bin/ ./harness/cmd/xbench ./plugins/burnstyle-hip/cmd/burnstyle-hip
#   DEADLINE=560 bash scripts/h100-profile.sh OUTDIR
# OUTDIR gets at most two files: h100-profile.log (every table) and
# traces.tar.xz (one Chrome trace per backend; a trace that would push the
# archive over MAXMB, 15 by default, since what comes back from the device is
# capped at 16 MiB a file, is left out and named in the log). The same on a
# CPU, as a check:
#   DEVICE=cpu SIZE=tiny SEQ=64 bash scripts/h100-profile.sh /tmp/p
set -uo pipefail
out=${1:-/tmp/h100-profile-out}
deadline=${DEADLINE:-560}
device=${DEVICE:-cuda}
size=${SIZE:-125m}
seq=${SEQ:-2048}
calls=${CALLS:-2}  # 2, not the CLI's 3: an eager 125m trace is tens of MB a call
maxmb=${MAXMB:-15}
X=${XBENCH:-bin/xbench}
traces=${TRACES:-results/local/profile/h100-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out" "$traces"
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
start=$(date +%s)
log="$out/h100-profile.log"
: >"$log"

. "$(dirname "$0")/device-step.sh"

cfg="--device $device --model-size $size --ttt-type linear --dtype float32 --seq-len $seq --warmup 3 --calls $calls --top 15"
step machine 15 sh -c 'nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"; nproc; git rev-parse --short HEAD 2>/dev/null'
# Cheapest first: the native backend needs no Python; compile and jax
# compile for longest.
for b in burnstyle-hip pytorch triton jax pytorch/compile; do
  step "profile $b" 150 $X profile --backends "$b" $cfg --timeout 140s --trace-dir "$traces"
done
ls -la "$traces" | tee -a "$log"
# Pack the traces, leaving out the largest until the archive fits.
pack=$(ls -S "$traces"/*.json 2>/dev/null | xargs -r -n1 basename | tac)  # smallest first
while :; do
  rm -f "$out/traces.tar.xz"
  [ -z "$pack" ] && break
  XZ_OPT=-6T0 tar cJf "$out/traces.tar.xz" -C "$traces" $pack
  [ "$(stat -c %s "$out/traces.tar.xz")" -le $(( maxmb * 1024 * 1024 )) ] && break
  big=$(echo "$pack" | tail -n1)
  echo "=== left out of traces.tar.xz (over ${maxmb} MiB together): $big" | tee -a "$log"
  pack=$(echo "$pack" | head -n -1)
done
echo "=== done at t=$(( $(date +%s) - start ))s; traces in $out/traces.tar.xz: $(echo $pack)" | tee -a "$log"
