// Package runner decides how a backend's command is launched: inside the
// project's Nix dev shell (`nix develop <repo>#<shell> --command ...`), or
// directly with the project's Python virtual environment.
//
// The shells are defined by flake.nix and nix/shells.nix; each plugin manifest
// (plugins/<name>/plugin.json) names its shell. A caller typically does:
//
//	mode, err := runner.ParseMode(envFlag)      // --env auto|nix|venv
//	mode = runner.Resolve(mode, repoRoot, exec.LookPath)
//	argv := runner.Wrap(mode, repoRoot, manifest.Shell,
//		[]string{runner.PythonFor(mode, repoRoot), entry, "--serve"})
//	runnerName, nixRev := runner.Provenance(mode, repoRoot) // for result.Env
package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Mode is how backends are launched.
type Mode string

const (
	// ModeAuto is nix when nix is on PATH and the flake is present, else venv.
	ModeAuto Mode = "auto"
	// ModeNix runs the command inside the manifest's Nix dev shell.
	ModeNix Mode = "nix"
	// ModeVenv runs the command directly, with the project's .venv Python.
	ModeVenv Mode = "venv"
)

// Modes lists the accepted --env values, in the order they are documented.
var Modes = []Mode{ModeAuto, ModeNix, ModeVenv}

// DefaultShell is the shell used when a manifest names none (the native Go
// backend's shell).
const DefaultShell = "default"

// ParseMode parses an --env value. Surrounding space and case are ignored;
// anything else, the empty string included, is an error that names the flag,
// the value and the allowed values.
func ParseMode(s string) (Mode, error) {
	v := Mode(strings.ToLower(strings.TrimSpace(s)))
	for _, m := range Modes {
		if v == m {
			return m, nil
		}
	}
	allowed := make([]string, len(Modes))
	for i, m := range Modes {
		allowed[i] = string(m)
	}
	return "", fmt.Errorf("invalid --env value %q: want one of %s", s, strings.Join(allowed, ", "))
}

// Resolve turns ModeAuto into ModeNix or ModeVenv: nix when lookPath("nix")
// succeeds, repoRoot/flake.nix is a regular file and nix has flakes enabled
// (without them `nix develop` cannot run, e.g. Debian's nix-bin as installed,
// which CI has only to parse the .nix files); venv otherwise. Other modes are
// returned as they are. A nil lookPath means exec.LookPath.
func Resolve(m Mode, repoRoot string, lookPath func(string) (string, error)) Mode {
	if m != ModeAuto {
		return m
	}
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	if _, err := lookPath("nix"); err != nil {
		return ModeVenv
	}
	if fi, err := os.Stat(filepath.Join(repoRoot, "flake.nix")); err != nil || !fi.Mode().IsRegular() {
		return ModeVenv
	}
	if !flakesEnabled() {
		return ModeVenv
	}
	return ModeNix
}

// Wrap returns the argv that runs argv in the given mode. For ModeNix it is
//
//	nix develop <repoRoot>#<shell> --command argv...
//
// (shell "" means DefaultShell); for ModeVenv, argv itself. ModeAuto is first
// resolved with Resolve(m, repoRoot, exec.LookPath). The result is always a
// new slice. Note that Nix reads a flake in a Git checkout from the Git index:
// files that are not tracked are invisible inside the shell.
func Wrap(m Mode, repoRoot, shell string, argv []string) []string {
	if m == ModeAuto {
		m = Resolve(m, repoRoot, exec.LookPath)
	}
	if m != ModeNix {
		return append([]string(nil), argv...)
	}
	if shell == "" {
		shell = DefaultShell
	}
	out := make([]string, 0, len(argv)+4)
	out = append(out, "nix", "develop", repoRoot+"#"+shell, "--command")
	return append(out, argv...)
}

// Python is the interpreter for venv mode: repoRoot/.venv/bin/python when it
// exists, else python3 as found on PATH ("python3" when it is not found, so
// that the launch fails with the name in the error).
func Python(repoRoot string) string {
	venv := filepath.Join(repoRoot, ".venv", "bin", "python")
	if fi, err := os.Stat(venv); err == nil && !fi.IsDir() {
		return venv
	}
	if p, err := exec.LookPath("python3"); err == nil {
		return p
	}
	return "python3"
}

// PythonFor is the interpreter to name in a backend's argv: "python3" in nix
// mode (resolved on the shell's PATH, i.e. the Nix Python environment), else
// Python(repoRoot). ModeAuto is resolved first.
func PythonFor(m Mode, repoRoot string) string {
	if m == ModeAuto {
		m = Resolve(m, repoRoot, exec.LookPath)
	}
	if m == ModeNix {
		return "python3"
	}
	return Python(repoRoot)
}

// Provenance returns what result.Env records about the launch: Runner is the
// resolved mode ("nix" or "venv"), and NixRev the flake's locked nixpkgs
// revision in nix mode ("" without a flake.lock, and always "" in venv mode,
// where nixpkgs played no part).
func Provenance(m Mode, repoRoot string) (runnerName, nixRev string) {
	if m == ModeAuto {
		m = Resolve(m, repoRoot, exec.LookPath)
	}
	if m == ModeNix {
		return string(m), LockedNixpkgsRev(repoRoot)
	}
	return string(m), ""
}
