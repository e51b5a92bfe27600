# Evaluates the flake's dev shells against a stand-in nixpkgs
# (stub-nixpkgs.nix), so the flake wiring and the shell logic can be checked
# without nixpkgs, a binary cache or a network:
#
#   nix-instantiate --eval --strict --json nix/check/stub-eval.nix
#
# The result has, per system, the shell names of nix/shells.nix and a summary
# of every devShell the flake outputs (environment, package names, the Python
# environment's package names, shellHook). harness/runner/nix_test.go checks it.
let
  flake = import ../../flake.nix;
  stubNixpkgs = {
    lib = import ./stub-lib.nix;
    outPath = ./stub-nixpkgs.nix; # what `import nixpkgs { ... }` loads
  };
  outputs = flake.outputs { self = outputs; nixpkgs = stubNixpkgs; };

  summarise = shell:
    removeAttrs shell [ "packages" ] // {
      packages = map (p: p.pname) shell.packages;
      python = map (p: p.contents) (builtins.filter (p: p ? contents) shell.packages);
    };

  shellNames = (import ../shells.nix {
    lib = stubNixpkgs.lib;
    system = "x86_64-linux";
    pkgsFor = accel: throw "not evaluated";
  }).shellNames;
in
builtins.mapAttrs
  (system: shells: {
    inherit shellNames;
    shells = builtins.mapAttrs (_: summarise) shells;
  })
  outputs.devShells
