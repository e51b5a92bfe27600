#!/usr/bin/env bash
# Quick start, step 1: install what is missing, then compare every backend
# side by side on this machine (GPU when there is one, else the CPU) after
# checking that they compute the same model.
#   ./setup.sh                 # install, verify, compare
#   ./setup.sh --install-only  # install only
#   ./setup.sh -- --dtype bfloat16 ...   # extra flags for `xbench run`
set -euo pipefail
cd "$(dirname "$0")"
. scripts/lib.sh

install_only=0
if [ "${1:-}" = "--install-only" ]; then install_only=1; shift; fi
[ "${1:-}" = "--" ] && shift

need_tools
build_xbench
setup_venv
[ $install_only -eq 1 ] && exit 0

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  device=cuda; size=125m; seq=2048
else
  device=cpu; size=tiny; seq=256
  say "no GPU found: comparing on the CPU at the tiny size"
fi
say "checking that the backends agree (xbench verify, $device)"
bin/xbench verify --device "$device" --model-size tiny --ttt-type linear
say "comparing backends (xbench run, $device, $size, seq-len $seq)"
bin/xbench run --device "$device" --model-size "$size" --seq-len "$seq" "$@"
