# A stand-in for nixpkgs, just big enough to evaluate flake.nix and nix/*.nix
# without nixpkgs, a binary cache or a network (see stub-eval.nix). Called
# like nixpkgs: import it and apply it to { system, config }.
#
# A package is a record { pname, outPath }. Packages whose build depends on
# the accelerator carry it in their name ("torch-cuda", "torch-rocm",
# "torch-cpu"), taken from config the way nixpkgs takes it, so a shell that
# got the wrong nixpkgs instance shows up in the summary.
{ system, config ? { } }:
let
  cuda = config.cudaSupport or false;
  rocm = config.rocmSupport or false;
  accel = if cuda && rocm then "cuda+rocm" else if cuda then "cuda" else if rocm then "rocm" else "cpu";

  mkPkg = pname: { inherit pname; outPath = "/nix/store/00000000000000000000000000000000-${pname}"; };
  unfree = pname: if config.allowUnfree or false then mkPkg pname else throw "stub-nixpkgs: ${pname} is unfree and allowUnfree is not set";

  lib = import ./stub-lib.nix;

  pythonPackages = {
    numpy = mkPkg "numpy";
    jsonschema = mkPkg "jsonschema";
    safetensors = mkPkg "safetensors";
    torch = mkPkg "torch-${accel}" // { passthru = { cudaSupport = cuda; rocmSupport = rocm; }; };
    triton = mkPkg "triton-${accel}";
    triton-cuda = mkPkg "triton-cuda";
    jax = mkPkg "jax-${accel}";
    jaxlib = mkPkg "jaxlib-${accel}";
    ml-dtypes = mkPkg "ml-dtypes";
    sympy = mkPkg "sympy";
    fetchPypi = attrs: mkPkg "${attrs.pname}-${attrs.version}.whl";
    buildPythonPackage = attrs: mkPkg attrs.pname // { src = attrs.src; };
  };
in
{
  inherit lib system config;
  go = mkPkg "go";
  git = mkPkg "git";
  python3 = {
    withPackages = f: mkPkg "python3-env" // { contents = map (p: p.pname) (f pythonPackages); };
  };
  cudaPackages = {
    cuda_cudart = unfree "cuda_cudart";
    cuda_nvrtc = unfree "cuda_nvrtc";
    libcublas = unfree "libcublas";
  };
  rocmPackages = builtins.listToAttrs (map (n: { name = n; value = mkPkg n; }) [
    "clr" "rocm-runtime" "rocm-comgr" "rocm-device-libs" "rocblas" "hipblas" "rocminfo" "rocm-smi"
  ]);
  autoPatchelfHook = mkPkg "autoPatchelfHook";
  zlib = mkPkg "zlib";
  stdenv = { cc = { cc = { lib = mkPkg "libstdc++"; }; }; };
  symlinkJoin = { name, paths }: mkPkg name // { joined = map (p: p.pname) paths; };
  mkShell = attrs: attrs;
}
