# The few nixpkgs.lib functions flake.nix and nix/*.nix use, for the stand-in
# evaluation (stub-nixpkgs.nix, stub-eval.nix). Same behaviour on the inputs
# those files give them.
{
  genAttrs = names: f: builtins.listToAttrs (map (n: { name = n; value = f n; }) names);
  makeLibraryPath = ps: builtins.concatStringsSep ":" (map (p: "${p}/lib") ps);
  assertMsg = cond: msg: cond || throw msg;
  escapeShellArg = s: "'" + builtins.replaceStrings [ "'" ] [ "'\\''" ] s + "'";
}
