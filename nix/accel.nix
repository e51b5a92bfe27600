# Accelerator runtime pieces shared by the shells of one accelerator.
#
# Returns { packages, env, libraryPath, hook }:
#   packages     extra tools on PATH
#   env          environment variables set by the shell
#   libraryPath  what the native Go backend dlopens (put on LD_LIBRARY_PATH by
#                the "default" shells only; the Python packages carry their
#                own runpaths)
#   hook         shell code run on entry (prints to stderr only)
{ pkgs, accel }:
let
  lib = pkgs.lib;
in
if accel == "cuda" then
  let
    cp = pkgs.cudaPackages;
    nativeLibs = [ cp.cuda_cudart cp.cuda_nvrtc cp.libcublas ];
  in
  {
    packages = [ ];
    env = { XBENCH_ACCEL = "cuda"; };
    # The driver (libcuda.so) is not in nixpkgs' closure: it comes from the
    # host. NixOS puts it in /run/opengl-driver/lib; on other distributions see
    # docs/reproduce.md.
    libraryPath = lib.makeLibraryPath nativeLibs + ":/run/opengl-driver/lib";
    hook = "";
  }
else if accel == "rocm" then
  let
    # One prefix holding the HIP runtime and the libraries the backends use,
    # so ROCM_PATH means the same thing it means on a ROCm install.
    rocm = pkgs.symlinkJoin {
      name = "xbench-rocm";
      paths = with pkgs.rocmPackages; [
        clr # HIP runtime, hipcc, hiprtc
        rocm-runtime # HSA runtime
        rocm-comgr
        rocm-device-libs
        rocblas
        hipblas
        rocminfo
        rocm-smi
      ];
    };
  in
  {
    packages = [ rocm ];
    env = {
      XBENCH_ACCEL = "rocm";
      ROCM_PATH = "${rocm}";
      HIP_PATH = "${rocm}";
    };
    libraryPath = "${rocm}/lib";
    # HSA_OVERRIDE_GFX_VERSION makes the ROCm runtime treat a consumer card as
    # a supported ISA (for example 11.0.0 for an RDNA3 card ROCm does not
    # list). It is never set by default: it is opt-in through
    # XBENCH_HSA_OVERRIDE, because on a supported card it only hides problems.
    hook = ''
      if [ -n "''${XBENCH_HSA_OVERRIDE:-}" ]; then
        case "$XBENCH_HSA_OVERRIDE" in
          *[!0-9.]* | *..* | .* | *.)
            echo "xbench: ignoring XBENCH_HSA_OVERRIDE='$XBENCH_HSA_OVERRIDE': want a gfx version such as 11.0.0" >&2
            ;;
          *.*.*)
            export HSA_OVERRIDE_GFX_VERSION="$XBENCH_HSA_OVERRIDE"
            echo "xbench: HSA_OVERRIDE_GFX_VERSION=$HSA_OVERRIDE_GFX_VERSION (from XBENCH_HSA_OVERRIDE)" >&2
            ;;
          *)
            echo "xbench: ignoring XBENCH_HSA_OVERRIDE='$XBENCH_HSA_OVERRIDE': want a gfx version such as 11.0.0" >&2
            ;;
        esac
      elif [ -n "''${HSA_OVERRIDE_GFX_VERSION:-}" ]; then
        echo "xbench: note: HSA_OVERRIDE_GFX_VERSION=$HSA_OVERRIDE_GFX_VERSION was already set outside the shell" >&2
      fi
    '';
  }
else
  throw "xbench: unknown accelerator '${accel}' (want cuda or rocm)"
