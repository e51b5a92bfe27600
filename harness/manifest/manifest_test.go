package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "plugin.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name, body, wantErr string
	}{
		{"python", `{"name":"p","runtime":"python","entry":"b.py"}`, ""},
		{"bad runtime", `{"name":"p","runtime":"ruby","entry":"b.rb"}`, `runtime "ruby"`},
		{"no entry", `{"name":"p","runtime":"python"}`, "needs an entry"},
		{"bad name", `{"name":"Has Space","runtime":"builtin"}`, "must match"},
		{"not json", `{`, "parse manifest"},
		{"process per cell", `{"name":"p","runtime":"python","entry":"b.py","process_per_cell":true}`, ""},
		{"process per cell not a bool", `{"name":"p","runtime":"python","entry":"b.py","process_per_cell":"yes"}`, "process_per_cell"},
		{"process per cell builtin", `{"name":"p","runtime":"builtin","process_per_cell":true}`, "process_per_cell needs a backend process"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "x", tt.body)
			m, err := Load(filepath.Join(dir, "x", "plugin.json"))
			if tt.wantErr == "" {
				if err != nil || m.Dir != filepath.Join(dir, "x") {
					t.Fatalf("Load: %+v %v", m, err)
				}
				if argv := m.Argv("py"); len(argv) != 3 || argv[0] != "py" || argv[2] != "--serve" {
					t.Errorf("argv %v", argv)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestDiscoverRejectsDuplicates(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a", `{"name":"same","runtime":"builtin"}`)
	write(t, dir, "b", `{"name":"same","runtime":"builtin"}`)
	if _, _, err := Discover(dir); err == nil || !strings.Contains(err.Error(), "defined twice") {
		t.Fatalf("duplicate names accepted: %v", err)
	}
}

// TestDiscoverSkipsBadManifest: a broken plugin.json is skipped and named,
// and the other backends are still found.
func TestDiscoverSkipsBadManifest(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "good", `{"name":"good","runtime":"builtin"}`)
	write(t, dir, "bad", `{"name":"bad","runtime":`)
	ms, skipped, err := Discover(dir)
	if err != nil || len(ms) != 1 || ms[0].Name != "good" || len(skipped) != 1 || !strings.Contains(skipped[0].Error(), "bad") {
		t.Fatalf("found %v, skipped %v, error %v; want good found and bad skipped by name", ms, skipped, err)
	}
}

func TestRepositoryManifestsLoad(t *testing.T) {
	ms, skipped, err := Discover("../../plugins")
	if len(skipped) > 0 {
		t.Errorf("repository manifests skipped: %v", skipped)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 2 {
		t.Fatalf("found %d backends in plugins/, want at least burnstyle-hip and pytorch", len(ms))
	}
	// The candidates backend runs other people's code: each of its cells
	// must get a process of its own (issue 42); the project's own backends
	// keep one process for a whole sweep.
	for _, m := range ms {
		if want := m.Name == "candidates"; m.ProcessPerCell != want {
			t.Errorf("%s: process_per_cell %v, want %v", m.Name, m.ProcessPerCell, want)
		}
	}
}
