#!/usr/bin/env bash
# Quick start, step 1: install what is missing, then compare every backend
# side by side on this machine (GPU when there is one, else the CPU) after
# checking that they compute the same model.
#   ./setup.sh                 # install, verify, compare
#   ./setup.sh --install-only  # install only
#   ./setup.sh --dry-run       # the machine found and every package it would install; installs nothing
#   ./setup.sh --python PATH   # use an existing interpreter's frameworks (or XBENCH_PYTHON=PATH)
#   ./setup.sh -- --dtype bfloat16 ...   # extra flags for `xbench run`
# The machine (cpu, nvidia, amd; XBENCH_MACHINE overrides) picks the pinned
# requirements set: docs/usage.md, "Environments".
set -euo pipefail
cd "$(dirname "$0")"
. scripts/lib.sh

install_only=0 dry_run=0 python=${XBENCH_PYTHON:-} python_flag=XBENCH_PYTHON
while [ $# -gt 0 ]; do
  case "$1" in
    --install-only) install_only=1; shift;;
    --dry-run) dry_run=1; shift;;
    --python)
      [ $# -ge 2 ] || usage_die "--python needs a value (expected: the path of a Python 3.11+ interpreter)"
      python=$2 python_flag=--python; shift 2;;
    --python=*) python=${1#--python=} python_flag=--python; shift;;
    --) shift; break;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
    *) usage_die "unknown flag \"$1\" (allowed: --install-only, --dry-run, --python PATH, -- then flags of xbench run)";;
  esac
done

command -v python3 >/dev/null || die "python3 is not installed (need Python 3.11+)"
[ -z "$python" ] || python=$(resolve_python "$python_flag" "$python")
machine=$(detect_machine)

if [ $dry_run -eq 1 ]; then
  if [ -n "$python" ]; then
    check_python "$python_flag" "$python" >/dev/null
    echo "machine: $(environment machine | sed 's/\t/ (/; s/$/)/')"
    echo "$python_flag $python: installs nothing; its frameworks against the $machine set:"
    PYTHONPATH=plugins/_python "$python" -m xbench_py.environment check --machine "$machine" --python "$python" || true
  else
    environment plan
    read -r -a files <<<"$(requirement_files "$machine")"
    target="${XBENCH_CACHE:-$HOME/.cache/xbench}/venv-$(venv_key "${files[@]}")"
    if [ -f "$target/.complete" ]; then
      echo "venv: $target (complete: nothing to install)"
    else
      echo "venv: $target (would be created: the packages above and their dependencies)"
    fi
  fi
  echo "dry run: nothing installed"
  exit 0
fi

if command -v go >/dev/null || [ ! -x bin/xbench ]; then
  need_tools
  build_xbench
else
  # a machine without Go (our GPU device): binaries built elsewhere and
  # carried in bin/, as the device scripts do
  say "no Go here: using the prebuilt bin/xbench and plugin binaries"
fi
if [ -n "$python" ]; then
  use_python "$python_flag" "$python"
  say "checking $python's frameworks against what xbench supports ($machine set)"
  # exit 2 names each framework of a version xbench does not support;
  # missing ones are named with their fix, and their backends are left out
  PYTHONPATH=plugins/_python .venv/bin/python -m xbench_py.environment check --machine "$machine" --python .venv/bin/python
else
  setup_venv "$machine"
fi
[ $install_only -eq 1 ] && exit 0

case "$machine" in
  nvidia) device=cuda; size=125m; seq=2048;;
  amd) device=rocm; size=125m; seq=2048;;
  *) device=cpu; size=tiny; seq=256
     say "no GPU found: comparing on the CPU at the tiny size";;
esac
# The frameworks' persistent compile caches (XLA, inductor, Triton, IREE's
# modules, compiled on first use where iree-base-compiler is installed)
# live beside the venvs, so a second run compiles nothing it compiled before.
cc="${XBENCH_CACHE:-$HOME/.cache/xbench}/compile"
say "checking that the backends agree (xbench verify, $device)"
bin/xbench verify --device "$device" --model-size tiny --ttt-type linear --compile-cache "$cc"
say "comparing backends (xbench run, $device, $size, seq-len $seq)"
bin/xbench run --device "$device" --model-size "$size" --seq-len "$seq" --compile-cache "$cc" "$@"
