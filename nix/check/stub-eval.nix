# Evaluates nix/shells.nix against a stand-in nixpkgs, so the shell logic can
# be checked without nixpkgs, a binary cache or a network:
#
#   nix-instantiate --eval --strict --json nix/check/stub-eval.nix
#
# The stand-in implements only what nix/shells.nix, nix/python.nix and
# nix/accel.nix use; a package is a record { pname, outPath }, mkShell returns
# its arguments. The result summarises every shell of both systems (see
# harness/runner/nix_test.go, which checks it).
let
  mkPkg = pname: { inherit pname; outPath = "/nix/store/00000000000000000000000000000000-${pname}"; };

  lib = {
    makeLibraryPath = ps: builtins.concatStringsSep ":" (map (p: "${p}/lib") ps);
    assertMsg = cond: msg: cond || throw msg;
    escapeShellArg = s: "'" + builtins.replaceStrings [ "'" ] [ "'\\''" ] s + "'";
  };

  pythonPackages = accel: {
    numpy = mkPkg "numpy";
    jsonschema = mkPkg "jsonschema";
    torch = mkPkg "torch-${accel}" // {
      passthru = { cudaSupport = accel == "cuda"; rocmSupport = accel == "rocm"; };
    };
    triton = mkPkg "triton-${accel}";
    triton-cuda = mkPkg "triton-cuda";
    jax = mkPkg "jax";
    jaxlib = mkPkg "jaxlib";
  };

  pkgsFor = accel: {
    inherit lib;
    go = mkPkg "go";
    git = mkPkg "git";
    python3 = {
      withPackages = f: mkPkg "python3-env" // { contents = map (p: p.pname) (f (pythonPackages accel)); };
    };
    cudaPackages = {
      cuda_cudart = mkPkg "cuda_cudart";
      cuda_nvrtc = mkPkg "cuda_nvrtc";
      libcublas = mkPkg "libcublas";
    };
    rocmPackages = builtins.listToAttrs (map (n: { name = n; value = mkPkg n; }) [
      "clr" "rocm-runtime" "rocm-comgr" "rocm-device-libs" "rocblas" "hipblas" "rocminfo" "rocm-smi"
    ]);
    symlinkJoin = { name, paths }: mkPkg name // { joined = map (p: p.pname) paths; };
    mkShell = attrs: attrs;
  };

  summarise = shell:
    removeAttrs shell [ "packages" ] // {
      packages = map (p: p.pname) shell.packages;
      python = map (p: p.contents) (builtins.filter (p: p ? contents) shell.packages);
    };

  forSystem = system:
    let r = import ../shells.nix { inherit lib system pkgsFor; };
    in {
      inherit (r) shellNames;
      shells = builtins.mapAttrs (_: summarise) r.shells;
    };
in
{
  x86_64-linux = forSystem "x86_64-linux";
  aarch64-linux = forSystem "aarch64-linux";
}
