# xbench development shells.
#
#   nix develop                      Go harness + native backend (CUDA host)
#   nix develop .#bench-pytorch      PyTorch backend      (.#bench-pytorch-rocm)
#   nix develop .#bench-jax          JAX backend          (.#bench-jax-rocm)
#   nix develop .#bench-kernels      Triton backend       (.#bench-kernels-rocm)
#
# The shells themselves are defined in nix/shells.nix, whose `shellNames` list
# is the one place shell names are written down (harness/runner.FlakeShells
# reads it, and plugins/*/plugin.json name their shell from it). See
# docs/reproduce.md. These shells were written for, but not built on, the
# machines that produced the committed results: no Nix binary cache was
# reachable there.
{
  description = "xbench: dev shells for running the TTT benchmark backends side by side";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      lib = nixpkgs.lib;

      # CUDA shells exist on both; ROCm shells only on x86_64-linux, the one
      # platform nixpkgs builds ROCm for (nix/shells.nix leaves them out elsewhere).
      systems = [ "x86_64-linux" "aarch64-linux" ];

      # One nixpkgs instance per accelerator. The config decides how torch,
      # triton, jax and jaxlib are built: in the "cuda" instance
      # python3Packages.torch is the CUDA build (the same derivation as
      # torchWithCuda), in the "rocm" instance the ROCm one (torchWithRocm).
      # cudaCapabilities is left at nixpkgs' default on purpose, so that a
      # CUDA binary cache, where one is configured, can serve these builds.
      importPkgs = system: accel:
        import nixpkgs {
          inherit system;
          config = {
            allowUnfree = true; # the CUDA toolkit, cuDNN and NCCL are unfree
            cudaSupport = accel == "cuda";
            rocmSupport = accel == "rocm";
          };
        };

      shellsFor = system:
        let
          # Bound once per system so every shell of one accelerator shares one
          # nixpkgs evaluation.
          pkgsByAccel = {
            cuda = importPkgs system "cuda";
            rocm = importPkgs system "rocm";
          };
        in
        import ./nix/shells.nix {
          inherit lib system;
          pkgsFor = accel: pkgsByAccel.${accel};
        };
    in
    {
      devShells = lib.genAttrs systems (system: (shellsFor system).shells);
    };
}
