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
in
{
  inherit python;

  # plugins/pytorch
  pytorch = python.withPackages (ps: common ps ++ [ (torchFor ps) ]);

  # plugins/jax. On ROCm this is the CPU jaxlib; the shell says so when entered.
  jax = python.withPackages (ps: common ps ++ [ ps.jax ps.jaxlib ]);

  # plugins/triton: Triton kernels launched on torch tensors.
  kernels = python.withPackages (ps: common ps ++ [ (torchFor ps) (tritonFor ps) ]);
}
