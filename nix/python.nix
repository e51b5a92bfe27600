# The Python environments of the benchmark shells. Every package comes from
# nixpkgs (python3.withPackages); nothing is installed with pip.
#
# `pkgs` is a nixpkgs instance imported with config.cudaSupport or
# config.rocmSupport set (see flake.nix), and `accel` says which ("cuda" or
# "rocm"). nixpkgs builds torch, triton, jax and jaxlib for the accelerator in
# that config, so the plain attribute names below are the right variants:
#
#   accel   torch                       triton                jax / jaxlib
#   cuda    torch == torchWithCuda      triton-cuda           jaxlib(-bin) with CUDA,
#                                                             jax pulls jax-cuda12-plugin
#   rocm    torch == torchWithRocm      triton (AMD backend)  CPU only: nixpkgs has
#                                                             no ROCm jaxlib
#
# Using the configured instance rather than the *WithCuda attributes is what
# nixpkgs' torch maintainers recommend; it keeps every package in one
# environment built against the same CUDA or ROCm.
{ pkgs, accel }:
let
  lib = pkgs.lib;
  python = pkgs.python3;
  isCuda = accel == "cuda";
  isRocm = accel == "rocm";

  # Fail at evaluation, with a message, if torch is not the build we meant
  # (torch exposes cudaSupport and rocmSupport in passthru).
  torchFor = ps:
    let
      t = ps.torch;
      cuda = t.passthru.cudaSupport or isCuda;
      rocm = t.passthru.rocmSupport or isRocm;
    in
    assert lib.assertMsg (cuda == isCuda && rocm == isRocm)
      "xbench: python3Packages.torch in the ${accel} package set has cudaSupport=${builtins.toJSON cuda}, rocmSupport=${builtins.toJSON rocm}";
    t;

  # torch propagates the triton it was built with (triton-cuda in a CUDA
  # instance, triton otherwise); name the same one so the environment holds a
  # single triton.
  tritonFor = ps: if isCuda then ps.triton-cuda else ps.triton;

  # What every backend's Python side uses (the JSON-lines contract, result
  # schema checks, tensors for export through safetensors).
  common = ps: [ ps.numpy ps.jsonschema ps.safetensors ];

  # plugins/iree: IREE's compiler and runtime as PyPI publishes them (nixpkgs
  # has no IREE Python packages), the same version as requirements.txt. The
  # wheels are abi3 (CPython >= 3.12), x86_64 Linux; the runtime dlopens
  # libcuda / libamdhip64 at run time, so one build serves both accelerators.
  # autoPatchelfHook points their C++ libraries at nixpkgs' libstdc++.
  ireeWheel = ps: { pname, platform, hash, deps }:
    ps.buildPythonPackage {
      inherit pname;
      version = "3.13.0";
      format = "wheel";
      src = ps.fetchPypi {
        pname = builtins.replaceStrings [ "-" ] [ "_" ] pname;
        version = "3.13.0";
        format = "wheel";
        dist = "cp312";
        python = "cp312";
        abi = "abi3";
        inherit platform hash;
      };
      nativeBuildInputs = [ pkgs.autoPatchelfHook ];
      buildInputs = [ pkgs.stdenv.cc.cc.lib pkgs.zlib ];
      dependencies = deps;
    };
  ireeRuntime = ps: ireeWheel ps {
    pname = "iree-base-runtime";
    platform = "manylinux_2_28_x86_64";
    hash = "sha256-40K/QHAQ3ULuL7Qxq3Y9l8brvK0HYsHoQ4Bts9sxVyw=";
    deps = [ ps.numpy ps.ml-dtypes ];
  };
  ireeCompiler = ps: ireeWheel ps {
    pname = "iree-base-compiler";
    platform = "manylinux_2_27_x86_64.manylinux_2_28_x86_64";
    hash = "sha256-0J0uvYlV0+7qtWdwB8PSaDDIWFxhoODM38AgtjwSnm8=";
    deps = [ ps.numpy ps.sympy ];
  };
in
{
  inherit python;

  # plugins/pytorch
  pytorch = python.withPackages (ps: common ps ++ [ (torchFor ps) ]);

  # plugins/jax. On ROCm this is the CPU jaxlib; the shell says so when entered.
  jax = python.withPackages (ps: common ps ++ [ ps.jax ps.jaxlib ]);

  # plugins/triton: Triton kernels launched on torch tensors.
  kernels = python.withPackages (ps: common ps ++ [ (torchFor ps) (tritonFor ps) ]);

  # plugins/iree: the runtime, the compiler (modules are compiled on first
  # use, or read from --compile-cache) and ml_dtypes for bfloat16 arrays.
  iree = python.withPackages (ps: common ps ++ [ (ireeRuntime ps) (ireeCompiler ps) ps.ml-dtypes ]);
}
