package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// repoRoot is the repository root, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root %s has no go.mod: %v", root, err)
	}
	return root
}

const sampleLock = `{
  "nodes": {
    "nixpkgs": {
      "locked": {
        "lastModified": 1760000000,
        "narHash": "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        "owner": "NixOS",
        "repo": "nixpkgs",
        "rev": "0123456789abcdef0123456789abcdef01234567",
        "type": "github"
      },
      "original": {"owner": "NixOS", "ref": "nixos-unstable", "repo": "nixpkgs", "type": "github"}
    },
    "root": {"inputs": {"nixpkgs": "nixpkgs"}}
  },
  "root": "root",
  "version": 7
}`

func writeLock(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "flake.lock"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLockedNixpkgsRev(t *testing.T) {
	tests := []struct {
		name string
		lock string // "" means no flake.lock
		want string
	}{
		{"sample", sampleLock, "0123456789abcdef0123456789abcdef01234567"},
		{"absent", "", ""},
		{"malformed", "{ not json", ""},
		{"no nixpkgs node", `{"nodes": {"root": {"inputs": {}}}, "root": "root", "version": 7}`, ""},
		{"nixpkgs unlocked", `{"nodes": {"nixpkgs": {"original": {}}, "root": {"inputs": {"nixpkgs": "nixpkgs"}}}, "root": "root", "version": 7}`, ""},
		{"root input renamed node", `{"nodes": {
			"nixpkgs": {"locked": {"rev": "1111111111111111111111111111111111111111"}},
			"nixpkgs_2": {"locked": {"rev": "2222222222222222222222222222222222222222"}},
			"root": {"inputs": {"nixpkgs": "nixpkgs_2"}}}, "root": "root", "version": 7}`,
			"2222222222222222222222222222222222222222"},
		{"follows list falls back to nixpkgs node", `{"nodes": {
			"nixpkgs": {"locked": {"rev": "3333333333333333333333333333333333333333"}},
			"root": {"inputs": {"nixpkgs": ["other", "nixpkgs"]}}}, "root": "root", "version": 7}`,
			"3333333333333333333333333333333333333333"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.lock != "" {
				writeLock(t, dir, tt.lock)
			}
			if got := LockedNixpkgsRev(dir); got != tt.want {
				t.Errorf("LockedNixpkgsRev = %q, want %q", got, tt.want)
			}
		})
	}
}

// The repository has no flake.lock yet (none can be made without network
// access); when one is committed its nixpkgs revision must be readable.
func TestRepoLockIfPresent(t *testing.T) {
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "flake.lock")); err != nil {
		t.Skip("no flake.lock committed")
	}
	rev := LockedNixpkgsRev(root)
	if len(rev) != 40 {
		t.Errorf("flake.lock: locked nixpkgs rev = %q, want a 40-hex-digit commit", rev)
	}
}

var wantShells = []string{
	"default", "bench-pytorch", "bench-jax", "bench-kernels", "bench-iree",
	"default-rocm", "bench-pytorch-rocm", "bench-jax-rocm", "bench-kernels-rocm", "bench-iree-rocm",
}

func TestFlakeShellsRepo(t *testing.T) {
	got, err := FlakeShells(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantShells) {
		t.Errorf("FlakeShells = %q, want %q", got, wantShells)
	}
}

func TestParseShellNames(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    []string
		wantErr string
	}{
		{"plain", "{ x }: let\n shellNames = [ \"a\" \"b-rocm\" ]; in x", []string{"a", "b-rocm"}, ""},
		{"comments and newlines", "let\n  shellNames = [\n    # the CUDA one\n    \"a\" /* inline */\n    \"b\" # trailing\n  ];\nin 1", []string{"a", "b"}, ""},
		{"missing", `{ names = [ "a" ]; }`, nil, "no `shellNames"},
		{"not at the start of a line", "let shellNames = [ \"a\" ]; in 1", nil, "no `shellNames"},
		{"twice", "shellNames = [ \"a\" ];\nshellNames = [ \"b\" ];", nil, "want exactly one"},
		{"variable inside", "shellNames = [ \"a\" extra ];", nil, `unexpected "extra"`},
		{"appended", "shellNames = [ \"a\" ] ++ more;", nil, "must end with `];`"},
		{"interpolation", "shellNames = [ \"a${x}\" ];", nil, "not a plain shell name"},
		{"duplicate", "shellNames = [ \"a\" \"a\" ];", nil, "listed twice"},
		{"empty", "shellNames = [ ];", nil, "empty"},
		{"unclosed", "shellNames = [ \"a\"", nil, "not closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseShellNames(tt.src)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFlakeShellsNeedsFlakeImport(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "nix"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nix", "shells.nix"), []byte(`{ shellNames = [ "a" ]; }`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "flake.nix"), []byte(`{ outputs = _: { }; }`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := FlakeShells(dir); err == nil || !strings.Contains(err.Error(), "does not import") {
		t.Errorf("FlakeShells with a flake that ignores nix/shells.nix: error = %v", err)
	}
	if _, err := FlakeShells(t.TempDir()); err == nil {
		t.Error("FlakeShells on an empty directory: no error")
	}
}

// Every plugin manifest that names a shell must name one the flake defines.
func TestManifestShellsDefined(t *testing.T) {
	root := repoRoot(t)
	shells, err := FlakeShells(root)
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, s := range shells {
		defined[s] = true
	}
	paths, err := filepath.Glob(filepath.Join(root, "plugins", "*", "plugin.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Log("no plugins/*/plugin.json yet")
	}
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Name  string  `json:"name"`
			Shell *string `json:"shell"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case m.Shell == nil:
			t.Logf("%s: names no shell (nix mode uses %q)", rel, DefaultShell)
		case !defined[*m.Shell]:
			t.Errorf("%s: shell %q is not defined by the flake (nix/shells.nix defines %s)", rel, *m.Shell, strings.Join(shells, ", "))
		default:
			t.Logf("%s: shell %q ok", rel, *m.Shell)
		}
	}
}
