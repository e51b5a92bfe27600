#!/usr/bin/env bash
# Issue 41 on the H100: the README's first command run as a user on a GPU
# machine with its frameworks preinstalled would run it (./setup.sh --python
# python3: build, check the frameworks, verify, compare at 125m on cuda),
# with xbench doctor before and after. The device has no Go and no network:
# build here, carry bin/ and the cupti-python wheel (.whl/), run from the
# repository root:
#   ./setup.sh --install-only      # bin/xbench and the plugin binaries
#   mkdir -p .whl && .venv/bin/pip download --no-deps -d .whl 'cupti-python==13.0.*' \
#       --python-version 3.12 --platform manylinux_2_28_x86_64 --only-binary=:all:
#   bash scripts/h100-setup.sh "$OUT"       # about 8 minutes
# OUTDIR gets h100-setup.log (every step's output and exit), doctor-before.txt,
# doctor-after.txt, results/ (the run's result JSON) and time-to-table.txt.
# What to check: doctor-after.txt names no fallback clock for pytorch, jax,
# triton; each result of results/ has env.timing starting cupti-kernel-
# (or a launch-bound note); the summary shows exit 0 for setup and run.
# Commit OUTDIR as results/h100-setup.
set -uo pipefail
out=${1:-/tmp/h100-setup-out}
deadline=${DEADLINE:-580}
py=${PY:-python3}
mkdir -p "$out/results"
start=$(date +%s)
log="$out/h100-setup.log"
: >"$log"
. "$(dirname "$0")/device-step.sh"

step machine 15 sh -c 'nvidia-smi -L; ls bin/ .whl/ 2>&1; git rev-parse --short HEAD 2>/dev/null; true'
step "dry run" 30 ./setup.sh --dry-run --python "$py"
# the venv over the device's Python, and its check of the frameworks
step "setup install-only" 120 ./setup.sh --python "$py" --install-only
step "doctor before" 240 sh -c "bin/xbench doctor --start-timeout 120s > '$out/doctor-before.txt'; rc=\$?; cat '$out/doctor-before.txt'; exit \$rc"
# the fix doctor names for the device clock, from the carried wheel (no network here)
step "cupti-python" 60 .venv/bin/python -m pip install -q --no-index --find-links .whl cupti-python
step "doctor after" 240 sh -c "bin/xbench doctor --start-timeout 120s > '$out/doctor-after.txt'; rc=\$?; cat '$out/doctor-after.txt'; exit \$rc"
# end to end as the README says, timed from its start to the first table
t0=$(date +%s)
step "setup end to end" 400 ./setup.sh --python "$py" -- --results "$out/results" --backends pytorch,jax,triton,burnstyle-hip,iree
echo "setup.sh --python $py to its run table: $(( $(date +%s) - t0 ))s" | tee "$out/time-to-table.txt" | tee -a "$log"
step clocks 15 sh -c "grep -ho '\"timing\": *\"[a-z-]*' -r '$out/results' | sort | uniq -c"
echo; echo "=== summary" | tee -a "$log"
grep -E '^=== .*: exit|^=== SKIP' "$log" | tee -a "$log.summary"
cat "$log.summary" >>"$log"; rm -f "$log.summary"
