package registry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/manifest"
)

// A runtime-plugin backend's binary is found beside xbench first, then in
// the repository's bin/; when neither has it, the error says how to build it.
func TestPluginBinary(t *testing.T) {
	root, other := t.TempDir(), t.TempDir()
	m := manifest.Manifest{Name: "native", Runtime: manifest.RuntimePlugin, Dir: filepath.Join(root, "plugins", "native")}
	put := func(dir string) string {
		p := filepath.Join(dir, "native")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	r := &Registry{opts: Options{Root: root, Self: filepath.Join(other, "xbench")}}
	_, err := r.PluginBinary(m)
	if err == nil || !strings.Contains(err.Error(), "go build -o bin/ ./plugins/native/cmd/native") {
		t.Fatalf("no binary anywhere: got %v, want the build command", err)
	}
	inBin := put(filepath.Join(root, "bin"))
	if got, err := r.PluginBinary(m); err != nil || got != inBin {
		t.Errorf("binary in bin/: got %q, %v", got, err)
	}
	beside := put(other)
	if got, err := r.PluginBinary(m); err != nil || got != beside {
		t.Errorf("binary beside xbench: got %q, %v; want it before bin/'s", got, err)
	}
}

// Missing names each required module the backends' Python cannot find, a
// dotted one whose parent is missing too (iree.runtime without iree)
// included, and nothing that is there.
func TestMissing(t *testing.T) {
	root := t.TempDir()
	r := &Registry{opts: Options{Root: root}, manifests: map[string]manifest.Manifest{
		"py": {Name: "py", Runtime: manifest.RuntimePython, Requires: []string{"json", "xbench_no_such.runtime", "os.path", "xbench_nope"}},
	}}
	got, err := r.Missing("py")
	if err != nil || strings.Join(got, " ") != "xbench_no_such.runtime xbench_nope" {
		t.Errorf("Missing: %v, %v; want the two missing modules", got, err)
	}
}
