package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// ShellsFile is where the flake's dev shells are defined, relative to the
// repository root. Its `shellNames` list is the single source of shell names.
const ShellsFile = "nix/shells.nix"

// LockedNixpkgsRev returns the nixpkgs revision pinned by repoRoot/flake.lock:
// the `locked.rev` of the node that the root's `nixpkgs` input points to
// (normally the node named "nixpkgs"). It returns "" when there is no
// flake.lock or it cannot be read as one.
func LockedNixpkgsRev(repoRoot string) string {
	data, err := os.ReadFile(filepath.Join(repoRoot, "flake.lock"))
	if err != nil {
		return ""
	}
	var lock struct {
		Root  string `json:"root"`
		Nodes map[string]struct {
			Inputs map[string]json.RawMessage `json:"inputs"`
			Locked *struct {
				Rev string `json:"rev"`
			} `json:"locked"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(data, &lock); err != nil {
		return ""
	}
	node := "nixpkgs"
	if lock.Root == "" {
		lock.Root = "root"
	}
	if root, ok := lock.Nodes[lock.Root]; ok {
		var name string
		// An input is a node name, or a list (a `follows` path), which we do
		// not chase; the node name "nixpkgs" is the fallback.
		if raw, ok := root.Inputs["nixpkgs"]; ok && json.Unmarshal(raw, &name) == nil && name != "" {
			node = name
		}
	}
	if n, ok := lock.Nodes[node]; ok && n.Locked != nil {
		return n.Locked.Rev
	}
	return ""
}

// errNoList is returned (wrapped) by FlakeShells when nix/shells.nix has no
// shellNames list.
var errNoList = errors.New("no `shellNames = [ ... ];` list")

var (
	shellListStart = regexp.MustCompile(`(?m)^[ \t]*shellNames[ \t]*=[ \t]*\[`)
	shellNameRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// FlakeShells returns the dev shell names the flake defines, in the order
// they are written.
//
// It reads them as text, without evaluating Nix: repoRoot/nix/shells.nix must
// contain exactly one line starting `shellNames = [`, and the list must hold
// only string literals, whitespace and comments up to `];`. Anything else in
// the list (a variable, `++`, an interpolation) is an error rather than a
// silently shorter list. repoRoot/flake.nix must import ./nix/shells.nix, so
// that the list is the one the flake uses. On systems other than x86_64-linux
// the flake leaves out the "-rocm" shells; the list is the full set.
func FlakeShells(repoRoot string) ([]string, error) {
	flake, err := os.ReadFile(filepath.Join(repoRoot, "flake.nix"))
	if err != nil {
		return nil, err
	}
	if !strings.Contains(string(flake), "./nix/shells.nix") {
		return nil, fmt.Errorf("%s: does not import ./nix/shells.nix", filepath.Join(repoRoot, "flake.nix"))
	}
	path := filepath.Join(repoRoot, ShellsFile)
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	names, err := parseShellNames(string(src))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return names, nil
}

// parseShellNames extracts the `shellNames = [ "a" "b" ];` list from Nix text.
func parseShellNames(src string) ([]string, error) {
	locs := shellListStart.FindAllStringIndex(src, -1)
	switch len(locs) {
	case 0:
		return nil, errNoList
	case 1:
	default:
		return nil, fmt.Errorf("%d `shellNames = [` lists; want exactly one", len(locs))
	}
	lineOf := func(i int) int { return strings.Count(src[:i], "\n") + 1 }

	var names []string
	seen := map[string]bool{}
	i := locs[0][1]
	for {
		if i >= len(src) {
			return nil, fmt.Errorf("shellNames list opened on line %d is not closed", lineOf(locs[0][0]))
		}
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("line %d: unclosed /* comment in shellNames", lineOf(i))
			}
			i += 2 + end + 2
		case c == '"':
			end := strings.IndexByte(src[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("line %d: unclosed string in shellNames", lineOf(i))
			}
			name := src[i+1 : i+1+end]
			if !shellNameRE.MatchString(name) {
				return nil, fmt.Errorf("line %d: %q is not a plain shell name (letters, digits, '.', '_', '-')", lineOf(i), name)
			}
			if seen[name] {
				return nil, fmt.Errorf("line %d: shell %q listed twice", lineOf(i), name)
			}
			seen[name] = true
			names = append(names, name)
			i += end + 2
		case c == ']':
			rest := strings.TrimLeft(src[i+1:], " \t\r\n")
			if !strings.HasPrefix(rest, ";") {
				return nil, fmt.Errorf("line %d: shellNames list must end with `];` (a plain list, nothing appended)", lineOf(i))
			}
			if len(names) == 0 {
				return nil, fmt.Errorf("line %d: shellNames list is empty", lineOf(i))
			}
			return names, nil
		default:
			j := i
			for j < len(src) && !strings.ContainsRune(" \t\r\n\"]", rune(src[j])) {
				j++
			}
			return nil, fmt.Errorf("line %d: unexpected %q in shellNames: only string literals and comments are allowed", lineOf(i), src[i:j])
		}
	}
}
