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
apt_install nix-bin chromium slurm-wlm munge libamdhip64-dev libhiprtc-builtins5 libamd-comgr2
build_xbench
setup_venv

export XBENCH_REQUIRE_NIX=1 XBENCH_REQUIRE_CHROMIUM=1 XBENCH_SLURM=1
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
say "go vet"
go vet ./...
say "go test (Go core, native backend CPU path, plugins over real gRPC)"
go test -count=1 -timeout 30m ./...
say "nix files"
bash scripts/check-nix.sh
say "pytest (Python contract, pytorch, jax, triton via the interpreter, iree on the CPU and compiled for AMD)"
.venv/bin/python -m pytest -q plugins
say "xbench verify: every backend against the float64 reference (CPU, tiny)"
for t in linear mlp; do
  bin/xbench verify --device cpu --model-size tiny --ttt-type "$t"
  # the training step: the logits and every parameter's gradient
  bin/xbench verify --device cpu --model-size tiny --ttt-type "$t" --phase backward
done
# the harness reference's hand-written backward against pytorch's
# autograd, both in float64: the independent check of its derivation
bin/xbench verify --device cpu --model-size tiny --phase backward --dtype float64 --backends pytorch
# the mamba backbone, forward and training step (a backend without it
# answers unsupported), and its backward in float64 against autograd
bin/xbench verify --device cpu --model-size tiny --backbone mamba
bin/xbench verify --device cpu --model-size tiny --backbone mamba --ttt-type mlp --phase backward
bin/xbench verify --device cpu --model-size tiny --backbone mamba --phase backward --dtype float64 --backends pytorch
for d in float32 bfloat16; do
  bin/xbench verify --workload gemm --device cpu --dtype "$d" --layout nt
done
# attention at its verify defaults (GQA, 37 positions, head_dim 40): out in
# float32, then out and the three gradients in bfloat16 with the causal mask
bin/xbench verify --workload attention --device cpu --dtype float32
bin/xbench verify --workload attention --device cpu --phase backward --dtype bfloat16 --causal true
# iree (plugins/iree) runs in the lines above on the CPU (llvm-cpu); its
# attention is forward only, so here also causal in bfloat16 beside pytorch
bin/xbench verify --workload attention --device cpu --dtype bfloat16 --causal true --backends iree,pytorch
# triton's kernels tile the head dim in powers of two (head_dim 40 is
# answered unsupported above), so they are verified at head_dim 32 too
bin/xbench verify --workload attention --device cpu --head-dim 32 --phase both --dtype float32 --causal true \
  --backends triton,pytorch
# scan at its verify defaults (T 20, K 4, C 3, three lengths): every
# backend (flash-semicrf too: the real package) on each semiring, and the
# gradients of log and max
bin/xbench verify --workload scan --device cpu
bin/xbench verify --workload scan --device cpu --phase backward
bin/xbench verify --workload scan --device cpu --phase both --semiring max
bin/xbench verify --workload scan --device cpu --semiring entropy
