# The xbench dev shells, all built by one function (mkBenchShell) from a
# backend description and an accelerator.
#
# Arguments:
#   lib      nixpkgs.lib
#   system   e.g. "x86_64-linux"
#   pkgsFor  accel -> nixpkgs instance configured for that accelerator
#            ("cuda" or "rocm"; see flake.nix)
#
# Returns { shellNames, shells }: shells is the attribute set the flake
# exports as devShells.<system>.
{ lib, system, pkgsFor }:
let
  # The one list of dev shell names. A name is <backend> for the CUDA shell and
  # <backend>-rocm for the ROCm one. harness/runner.FlakeShells reads this list
  # as text, so keep it a plain list of string literals (comments are fine);
  # plugins/*/plugin.json "shell" must be one of these (a test checks).
  shellNames = [
    "default"
    "bench-pytorch"
    "bench-jax"
    "bench-kernels"
    "bench-iree"
    "default-rocm"
    "bench-pytorch-rocm"
    "bench-jax-rocm"
    "bench-kernels-rocm"
    "bench-iree-rocm"
  ];

  # What each backend needs besides Go and the accelerator runtime.
  #   python   which environment of nix/python.nix, or null
  #   native   put the accelerator libraries on LD_LIBRARY_PATH (the native Go
  #            backend dlopens them; Python packages carry their own runpaths)
  #   env      extra environment variables
  #   notes    accel -> lines printed on entry
  backends = {
    default = {
      description = "Go harness and the native backend (burnstyle-hip)";
      python = null;
      native = true;
      env = { };
      notes = accel: [ ];
    };
    bench-pytorch = {
      description = "PyTorch backend (plugins/pytorch)";
      python = "pytorch";
      native = false;
      env = { };
      notes = accel: [ ];
    };
    bench-jax = {
      description = "JAX backend (plugins/jax)";
      python = "jax";
      native = false;
      # A sweep runs many configurations in one process; without this XLA
      # grabs 75% of device memory up front and peak-memory numbers and OOM
      # behaviour stop meaning anything.
      env = { XLA_PYTHON_CLIENT_PREALLOCATE = "false"; };
      notes = accel:
        if accel == "rocm"
        then [ "jaxlib here is the CPU build: nixpkgs has no ROCm jaxlib, so JAX runs report device cpu" ]
        else [ ];
    };
    bench-kernels = {
      description = "Triton kernels backend (plugins/triton)";
      python = "kernels";
      native = false;
      env = { };
      notes = accel: [ ];
    };
    bench-iree = {
      description = "IREE backend (plugins/iree)";
      python = "iree";
      native = false;
      env = { };
      notes = accel:
        if system != "x86_64-linux"
        then [ "IREE's PyPI wheels pinned here are x86_64 only: this shell will not build on ${system}" ]
        else [ ];
    };
  };

  # "bench-jax-rocm" -> { backend = "bench-jax"; accel = "rocm"; }
  parseName = name:
    let m = builtins.match "(.+)-rocm" name;
    in if m == null
      then { backend = name; accel = "cuda"; }
      else { backend = builtins.head m; accel = "rocm"; };

  # nixpkgs builds ROCm for x86_64-linux only.
  supported = name: (parseName name).accel != "rocm" || system == "x86_64-linux";

  mkBenchShell = name:
    let
      parsed = parseName name;
      accel = parsed.accel;
      b = backends.${parsed.backend}
        or (throw "xbench: shell '${name}' names backend '${parsed.backend}', which nix/shells.nix does not describe");
      pkgs = pkgsFor accel;
      pythons = import ./python.nix { inherit pkgs accel; };
      rt = import ./accel.nix { inherit pkgs accel; };
      pythonEnv = if b.python == null then [ ] else [ pythons.${b.python} ];
      # go.mod asks for Go 1.26; take that series where this nixpkgs has it.
      go = pkgs.go_1_26 or pkgs.go;
      banner = [ "xbench: dev shell '${name}' (${accel}, ${system}): ${b.description}" ]
        ++ map (l: "xbench: " + l) (b.notes accel);
    in
    pkgs.mkShell ({
      name = "xbench-${name}";
      packages = [ go pkgs.git ] ++ pythonEnv ++ rt.packages;

      XBENCH_SHELL = name;
      # Use the Go from nixpkgs; never download another toolchain behind the
      # pin's back (a too-old Go fails loudly instead).
      GOTOOLCHAIN = "local";
      # Packages come from the Nix environment only, not ~/.local.
      PYTHONNOUSERSITE = "1";

      # Everything goes to stderr: under `nix develop --command` stdout is the
      # backend's JSON-lines channel to the harness.
      shellHook = ''
        ${if b.native then ''export LD_LIBRARY_PATH="${rt.libraryPath}''${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"'' else ""}
        ${rt.hook}
        if [ -z "''${XBENCH_SHELL_QUIET:-}" ]; then
          ${builtins.concatStringsSep "\n  " (map (l: "echo ${lib.escapeShellArg l} >&2") banner)}
        fi
      '';
    } // rt.env // b.env);

  names = builtins.filter supported shellNames;
in
{
  inherit shellNames;
  shells = builtins.listToAttrs (map (name: { inherit name; value = mkBenchShell name; }) names);
}
