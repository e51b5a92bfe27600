#!/usr/bin/env bash
# Issue 31 probe, GPU machine, about 2 minutes, from the repository root:
#   bash scripts/probe-jax-clock.sh OUTDIR
# Carried wheels in .whl/: cupti_python 13.0.1 and/or 13.4.0 (cp312; each tried
# in its own folder, in name order), cuda_pathfinder,
# pyelftools, and optionally nvidia_cuda_cupti-13.4.92 (a newer libcupti,
# tried only where the machine's own libcupti does not work) and
# cuda_bindings (installed only where the machine has none).
# Shows: which libcupti cupti-python loads, whether it records the kernels of
# a jitted JAX bf16 4096^3 matmul, and that matmul's CUPTI span vs the host
# clock xbench uses today vs torch's CUDA events, plus a null call.
set -uo pipefail
out=${1:-/tmp/probe-jax-clock}
mkdir -p "$out"
log="$out/probe-jax-clock.log"
exec > >(tee -a "$log") 2>&1
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false
PY=${PY:-python3}
echo "=== machine"; nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader
$PY -c 'import sys; print(sys.version)'
echo "=== libcupti on the machine"
ls -l /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* 2>/dev/null
$PY - <<'EOF'
import glob, site, sys
for d in site.getsitepackages() + [site.getusersitepackages()]:
    for f in glob.glob(d + "/nvidia/**/libcupti.so*", recursive=True):
        print(f)
EOF
$PY -m pip list 2>/dev/null | grep -iE "cupti|cuda-bindings|cuda-pathfinder|pyelftools|^jax|^torch " 

echo "=== install carried wheels: one folder per cupti-python version"
common=()
for w in .whl/cuda_pathfinder-*.whl .whl/pyelftools-*.whl; do [ -f "$w" ] && common+=("$w"); done
if ! $PY -c 'import cuda.bindings' 2>/dev/null; then
  for w in .whl/cuda_bindings-*.whl; do [ -f "$w" ] && common+=("$w"); done
fi
sites=()
for w in .whl/cupti_python-*.whl; do
  [ -f "$w" ] || continue
  v=$(basename "$w" | cut -d- -f2)
  $PY -m pip install -q --no-index --no-deps --target "/tmp/site-$v" "$w" "${common[@]}" && sites+=("/tmp/site-$v") || echo "pip install $w FAILED"
done
echo "cupti-python sites: ${sites[*]:-none}"
# A newer libcupti goes to its own folder, preloaded only where asked, so it shadows nothing of torch's.
alt=""
for w in .whl/nvidia_cuda_cupti-*.whl; do
  [ -f "$w" ] || continue
  $PY -m pip install -q --no-index --no-deps --target /tmp/site-libcupti "$w" && alt=$(ls /tmp/site-libcupti/nvidia/cu13/lib/libcupti.so.* 2>/dev/null | head -1)
done
echo "alternative libcupti: ${alt:-none}"

# quick SITE [LIB]: import cupti-python from SITE (with LIB preloaded) and record one jax matmul.
ok_site="" ok_pre=()
try() {
  local site=$1 lib=${2:-} pre=()
  [ -n "$lib" ] && pre=(--preload "$lib")
  echo "=== quick: $site ${lib:+preload $lib}"
  PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH} timeout -k 5 90 $PY scripts/probe_jax_clock.py --quick "${pre[@]}"
  local rc=$?
  if [ $rc -eq 0 ]; then ok_site=$site ok_pre=("${pre[@]}"); return 0; fi
  echo "quick failed rc=$rc"; return 1
}
for site in "${sites[@]}"; do try "$site" && break; done
if [ -z "$ok_site" ]; then
  for site in "${sites[@]}"; do
    for lib in "$alt" /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13; do
      [ -n "$lib" ] && [ -f "$lib" ] && try "$site" "$lib" && break 2
    done
  done
fi
if [ -n "$ok_site" ]; then
  echo "=== full probe: $ok_site ${ok_pre[*]}"
  PYTHONPATH=$ok_site${PYTHONPATH:+:$PYTHONPATH} timeout -k 5 150 $PY scripts/probe_jax_clock.py "${ok_pre[@]}"
  echo "full probe rc=$?"
else
  echo "=== no cupti-python + libcupti combination recorded a jax kernel"
fi
