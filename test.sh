#!/usr/bin/env bash
# Quick start, step 2: every test. CI runs exactly this (.ci/run).
# It installs what the tests need (Go modules, .venv, and the Debian
# packages for the nix, Chromium and SLURM tests), then runs them; tests that
# need those tools fail rather than skip here, because this script installed them.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/lib.sh

need_tools
# Debian 12's ROCm 5.2 hipRTC (in libamdhip64) compiles the native
# backend's kernels for AMD targets without a GPU (TestHIPRTC).
# Debian 12's clang 16 and ROCm device libraries are the front end of the
# gfx942 compile (hipRTC 5.2 crashes on gfx942; gpu.GFX942Compile).
debs=(nix-bin chromium slurm-wlm munge libamdhip64-dev libhiprtc-builtins5 libamd-comgr2 clang-16 rocm-device-libs)
# gfx942 (MI300), which hipRTC 5.2 cannot compile for: clang 16 compiles
# each kernel's HIP source to bitcode, ROCm 7.2.2's LLVM (PyPI's
# rocm-llvm-python) generates gfx942 code from it (TestHIPRTC's gfx942
# subtests; their objects are cached with hipRTC's).
export XBENCH_LIBROCMLLVM="${XBENCH_CACHE:-$HOME/.cache/xbench}/rocm-llvm-$ROCM_LLVM_PYTHON/librocmllvm.so"
# AMD's hipBLASLt and rocBLAS headers (Debian unstable's -dev packages;
# Debian 12 has neither library): every function of the native backend's
# hipBLASLt and rocBLAS bindings is declared there with the parameters it
# passes, and every constant has the header's value (TestROCmBLASHeaders).
export XBENCH_ROCM_BLAS_INCLUDE="${XBENCH_CACHE:-$HOME/.cache/xbench}/rocm-blas-headers"
# The installs run at once, as lanes (logs in results/local/install-lanes):
# on a fresh machine each is mostly a download or unpacking that waits on
# the network or the disk, and one after the other they took minutes of
# CI's time before the first test started. Each is a no-op when done before.
lanes_init results/local/install-lanes
lane apt apt_install "${debs[@]}"
lane build build_xbench
lane venv setup_venv
lane lint-tools lint_tools
lane rocm-llvm rocm_llvm "$(dirname "$XBENCH_LIBROCMLLVM")"
lane rocm-blas rocm_blas_headers "$XBENCH_ROCM_BLAS_INCLUDE"
lanes_wait

export XBENCH_REQUIRE_NIX=1 XBENCH_REQUIRE_CHROMIUM=1 XBENCH_SLURM=1
# The frameworks' compilers at the settings that suit tiny test shapes on
# 2 cores (what is computed is the same; how fast it runs is never asserted):
# XLA's LLVM back end at -O0 (JAX's tests: 103 -> 66 CPU-s here, all 85
# passing), and inductor compiling in this process instead of a pool of
# workers that each import torch first (test_compile.py: 62 -> 38 s wall).
export XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }--xla_backend_optimization_level=0"
export TORCHINDUCTOR_COMPILE_THREADS=1
# The real NVRTC from the venv's CUDA wheels compiles the native backend's
# kernels for sm_90 without a GPU (the *NVRTC tests: no compile error, no
# register spill past what each test allows).
nvrtc=$(ls .venv/lib/python3*/site-packages/nvidia/cu*/lib/libnvrtc.so.* 2>/dev/null | grep -v builtins | head -n 1)
[ -n "$nvrtc" ] || die "no libnvrtc in .venv (the torch wheel's nvidia-cuda-nvrtc): the NVRTC compile tests need it"
export XBENCH_LIBNVRTC="$PWD/$nvrtc"
# the same wheels' cuBLASLt: every symbol of the cublaslt variant's binding
# resolves against it (TestCUBLASLtSymbols; no GPU needed)
export XBENCH_LIBCUBLASLT="$PWD/$(dirname "$nvrtc")/libcublasLt.so.13"
[ -f "$XBENCH_LIBCUBLASLT" ] || die "no $XBENCH_LIBCUBLASLT (the torch wheel's nvidia-cublas): TestCUBLASLtSymbols needs it"
# hipRTC compiles every kernel for gfx90a and gfx1030 (TestHIPRTC: no compile
# error, no scratch past what the test allows); its code objects are kept
# beside the venv, keyed by compiler, source and options, so a rerun is fast.
hiprtc=/usr/lib/$(uname -m)-linux-gnu/libamdhip64.so.5
[ -f "$hiprtc" ] || die "no $hiprtc (Debian's libamdhip64-dev): the hipRTC compile tests need it"
export XBENCH_LIBHIPRTC="$hiprtc" XBENCH_HIPRTC_CACHE="${XBENCH_CACHE:-$HOME/.cache/xbench}/hiprtc"
# The tests run in lanes: independent groups started at once, each with
# its own log (kept in results/local/test-lanes/, printed as each lane
# ends, a failed lane's again at the very end), so that one lane's waits
# (backend processes importing their frameworks, timeouts that must pass,
# I/O) are another's CPU time: run one after the other on 2 cores they
# left ~40% of the CPU idle. The table at the end gives each lane's
# elapsed and CPU seconds.
go_lane() {
  say "go vet"
  go vet ./...
  say "go test (Go core, native backend CPU path, plugins over real gRPC)"
  # every package (./... again: go test runs each once), the plugins'
  # first: go test starts packages in the order named, and the native
  # backend's GPU package (emulator and compiler tests) is the longest, so
  # it runs beside the harness's packages rather than after them.
  go test -count=1 -timeout 30m ./plugins/... ./...
}
nix_lint_lane() {
  say "nix files"
  bash scripts/check-nix.sh
  say "lint: gofmt, staticcheck $STATICCHECK_VERSION, ruff $RUFF_VERSION"
  lint
}
# pytest in two lanes (triton's tests, and the rest): one pytest process
# uses one core, and as one lane it was CI's critical path (580 s of a
# 589 s run, 437 CPU-s) while the go lane left the other core idle at the
# end; every test still runs once.
pytest_triton_lane() {
  say "pytest: triton (its kernels in the interpreter, compiled for sm_90)"
  .venv/bin/python -m pytest -q plugins/triton
}
pytest_lane() {
  say "pytest (Python contract and conformance suite, pytorch, jax, iree on the CPU and compiled for AMD, the rest)"
  .venv/bin/python -m pytest -q plugins --ignore=plugins/triton
}
verify_lane() {
  # Every backend against the float64 reference (CPU, tiny): the
  # configurations, and why each is there, are in the plan file. One
  # invocation: each backend process starts once and serves every line.
  # The frameworks' persistent compile caches (XLA, inductor, IREE) are
  # kept beside the venv, as hipRTC's are: keyed by program, compiler and
  # version, they recompile only what changed (JAX's JIT alone took ~60%
  # of the TTT lines' time) and the outputs graded are the same.
  say "xbench verify: every backend against the float64 reference (CPU, tiny), suites/verify-ci.plan"
  bin/xbench verify --plan suites/verify-ci.plan --device cpu --compile-cache "${XBENCH_CACHE:-$HOME/.cache/xbench}/compile"
}
lanes_init results/local/test-lanes
lane go go_lane
lane pytest pytest_lane
lane pytest-triton pytest_triton_lane
lane verify verify_lane
lane nix+lint nix_lint_lane
lanes_wait
