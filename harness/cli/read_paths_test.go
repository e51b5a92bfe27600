package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
)

// A results folder holding a FIFO and a link to /dev/zero named *.json:
// every reader (report, history, export, compare) reads only regular files,
// so neither hangs it (a FIFO without a writer blocks a plain open) nor
// fills its memory (/dev/zero never ends); each is skipped and named.
func TestReadersSkipFIFOAndDeviceFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := sweeptest.WriteStandard(dir, "run-1"); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run-1")
	if err := syscall.Mkfifo(filepath.Join(run, "fifo.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(run, "zero.json")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
	}{
		{"report", []string{"report", "--results", dir, "--out", filepath.Join(t.TempDir(), "r.html")}},
		{"history", []string{"history", run}},
		{"export", []string{"export", "--results", dir, "--format", "csv", "run-1"}},
		{"compare", []string{"compare", "--results", dir, "run-1", "run-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code, err := runApp(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %v\n%s", code, err, stderr)
			}
			for _, want := range []string{"fifo.json is not a regular file (a FIFO)", "zero.json is not a regular file (a character device)"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr)
				}
			}
		})
	}
}
