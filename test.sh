#!/usr/bin/env bash
# Quick start, step 2: every test. CI runs exactly this (.ci/run).
# It installs what the tests need (Go modules, .venv, and the Debian
# packages for the nix, Chromium and SLURM tests) and runs the tests beside
# the installs, each group waiting for what it needs; tests that need those
# tools fail rather than skip here, because this script installed them.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/lib.sh

need_tools
# Debian 12's ROCm 5.2 hipRTC (in libamdhip64) compiles the native
# backend's kernels for AMD targets without a GPU (TestHIPRTC).
# Debian 12's clang 16 and ROCm device libraries are the front end of the
# gfx942 compile (hipRTC 5.2 crashes on gfx942; gpu.GFX942Compile).
debs=(nix-bin chromium slurm-wlm munge libamdhip64-dev libhiprtc-builtins5 libamd-comgr2 clang-16 rocm-device-libs)
# Go's toolchain with cgo off throughout, as the binaries are built
# (build_xbench): no package of the tree uses cgo, and one setting lets
# the build, go vet, staticcheck and go test share every compiled package
# in the build cache instead of compiling the standard library and the
# dependencies twice (go vet from an empty cache: 54 CPU-s with cgo on, 26
# with it off).
export CGO_ENABLED=0
# No DWARF in what the tests compile and link (the build, vet, staticcheck
# and go test see the same flags, so they still share the cache): nothing
# here runs a debugger, stack traces keep their lines, and it is ~10% of
# the compile and link time.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-gcflags=all=-dwarf=false -ldflags=-w"
# The frameworks' compilers at the settings that suit tiny test shapes on
# 2 cores (what is computed is the same; how fast it runs is never asserted):
# XLA's LLVM back end at -O0 (JAX's tests: 103 -> 66 CPU-s here, all 85
# passing), and inductor compiling in this process instead of a pool of
# workers that each import torch first (test_compile.py: 62 -> 38 s wall).
export XLA_FLAGS="${XLA_FLAGS:+$XLA_FLAGS }--xla_backend_optimization_level=0"
export TORCHINDUCTOR_COMPILE_THREADS=1
export XBENCH_REQUIRE_NIX=1 XBENCH_REQUIRE_CHROMIUM=1 XBENCH_SLURM=1

# installed_libs: the libraries the installs put in place, for the tests
# that compile or bind against them (each lane calls it once its installs
# have ended: they exist only then).
installed_libs() {
  # The real NVRTC from the venv's CUDA wheels compiles the native backend's
  # kernels for sm_90 without a GPU (the *NVRTC tests: no compile error, no
  # register spill past what each test allows).
  local nvrtc hiprtc
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
  # gfx942 (MI300), which hipRTC 5.2 cannot compile for: clang 16 compiles
  # each kernel's HIP source to bitcode, ROCm 7.2.2's LLVM (PyPI's
  # rocm-llvm-python) generates gfx942 code from it (TestHIPRTC's gfx942
  # subtests; their objects are cached with hipRTC's).
  export XBENCH_LIBROCMLLVM="$ROCM_LLVM_DIR/librocmllvm.so"
  # AMD's hipBLASLt and rocBLAS headers (Debian unstable's -dev packages;
  # Debian 12 has neither library): every function of the native backend's
  # hipBLASLt and rocBLAS bindings is declared there with the parameters it
  # passes, and every constant has the header's value (TestROCmBLASHeaders).
  export XBENCH_ROCM_BLAS_INCLUDE="$ROCM_BLAS_DIR"
}
ROCM_LLVM_DIR="${XBENCH_CACHE:-$HOME/.cache/xbench}/rocm-llvm-$ROCM_LLVM_PYTHON"
ROCM_BLAS_DIR="${XBENCH_CACHE:-$HOME/.cache/xbench}/rocm-blas-headers"

# Go's packages in two groups. EARLY: the native backend's and the
# workloads' own, whose tests need nothing installed but g++ (the GPU
# emulator): their compile-and-emulate tests are the longest in the tree,
# and they run while the installs download. A test there that needs an
# installed library skips for want of it and runs again in the go lane.
# The rest need the venv (Python backends), bin/ or the Debian packages.
early_pkgs() { go list ./plugins/burnstyle-hip/... ./harness/workload/... ./harness/numeric/...; }
late_pkgs() { go list ./... | grep -vxF -f <(early_pkgs); }

go_early_lane() {
  lane_await build  # its compiled packages are vet's and the tests' too
  say "go vet"
  go vet ./...
  say "go test: the native backend and the workloads (nothing installed needed; the tests that need an installed library skip here and run in the go lane)"
  # -vet=off: go vet ./... above checked the test files too
  # shellcheck disable=SC2046
  go test -count=1 -vet=off -timeout 30m -json $(early_pkgs) | python3 scripts/gotest_skips.py --skipped "$LANE_DIR/go-early.skipped"
  say "compiling the other packages' tests (the go lane runs them)"
  # shellcheck disable=SC2046
  go test -count=1 -vet=off -exec /bin/true $(late_pkgs) >/dev/null
}
go_lane() {
  lane_await build venv apt rocm-llvm rocm-blas
  installed_libs
  say "go test (Go core, plugins over real gRPC, the CLI end to end)"
  # shellcheck disable=SC2046
  go test -count=1 -vet=off -timeout 30m $(late_pkgs)
  lane_await go-early
  say "go test: the go-early lane's tests that needed an installed library"
  local pkg run
  while IFS=$'\t' read -r pkg run; do
    go test -count=1 -vet=off -timeout 30m -run "$run" "$pkg"
  done <"$LANE_DIR/go-early.skipped"
}
nix_lint_lane() {
  lane_await apt lint-tools
  say "nix files"
  bash scripts/check-nix.sh
  say "lint: gofmt, staticcheck $STATICCHECK_VERSION, ruff $RUFF_VERSION"
  lint
}
# pytest in two lanes (triton's tests, and the rest): one pytest process
# uses one core, and as one lane it was CI's critical path (580 s of a
# 589 s run, 437 CPU-s) while the go lane left the other core idle at the
# end; every test still runs once. (Tried on a fresh machine and undone:
# a third pytest lane, first beside pip's --no-compile (736 s), then with
# the lanes nothing waits on at nice 10 (776 s), against 699 s for this
# layout: more at once on 2 cores cost more than the idle tail it saved,
# and at nice 10 go-early, which the go lane's last step needs, ran last.)
# setup.sh's tests (test_setup.py: uv resolving the GPU sets against PyPI,
# venvs created) run in the triton lane, which ended ~120 s before the other
# on a fresh machine, while this one ended last, alone on one core.
SETUP_TESTS=plugins/_python/tests/test_setup.py
pytest_triton_lane() {
  lane_await venv build
  say "pytest: triton (its kernels in the interpreter, compiled for sm_90)"
  local rc=0
  .venv/bin/python -m pytest -q plugins/triton || rc=$?
  # a session of its own: triton's conftest sets TRITON_INTERPRET for its
  # session, and two tests/conftest.py in one session collide by name
  say "pytest: setup.sh's tests"
  .venv/bin/python -m pytest -q "$SETUP_TESTS" || rc=$?
  return $rc
}
pytest_lane() {
  lane_await venv build
  say "pytest (Python contract and conformance suite, pytorch, jax, iree on the CPU and compiled for AMD, the rest)"
  .venv/bin/python -m pytest -q plugins --ignore=plugins/triton --ignore="$SETUP_TESTS"
}
verify_lane() {
  lane_await venv build
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

# Everything runs as lanes at once (logs in results/local/test-lanes): the
# installs, each a no-op when done before and on a fresh machine mostly a
# download or an unpacking that waits on the network or the disk, and the
# tests, each of which first waits for the installs it needs (lane_await),
# so the tests that need nothing installed use the CPU the downloads leave.
lanes_init results/local/test-lanes
lane apt apt_install "${debs[@]}"
lane build build_xbench
lane venv setup_venv
lane lint-tools lint_tools
lane rocm-llvm rocm_llvm "$ROCM_LLVM_DIR"
lane rocm-blas rocm_blas_headers "$ROCM_BLAS_DIR"
lane go-early go_early_lane
lane go go_lane
lane pytest pytest_lane
lane pytest-triton pytest_triton_lane
lane verify verify_lane
lane nix+lint nix_lint_lane
lanes_wait
