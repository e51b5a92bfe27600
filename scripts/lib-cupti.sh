# Sourced by the GPU scripts of issue 31: install_cupti puts NVIDIA's
# cupti-python (carried as .whl/cupti_python-*.whl, cp312) on PYTHONPATH, so
# that xbench_py.devclock can read the kernels' device timestamps. It uses the
# libcupti of torch's nvidia-cuda-cupti wheel (13.0 on the H100 machine, which
# matches cupti-python 13.0.x). Without the wheel nothing is installed and the
# Python backends fall back to their own clocks, labelled in env.timing.
install_cupti() {
  local py=${PY:-python3} site=/tmp/site-cupti w
  w=$(ls .whl/cupti_python-13.0*.whl 2>/dev/null | head -1)
  [ -n "$w" ] || w=$(ls .whl/cupti_python-*.whl 2>/dev/null | head -1)
  if [ -z "$w" ]; then echo "no .whl/cupti_python-*.whl: no device clock for the Python backends"; return 0; fi
  $py -m pip install -q --no-index --no-deps --target "$site" "$w" || { echo "pip install $w failed"; return 0; }
  export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
  $py -c 'from cupti import cupti; print("cupti-python ok:", cupti.__file__)' || echo "cupti-python does not import"
}
