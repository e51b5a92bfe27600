package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/registry"
)

// A backend whose plugin.json does not list the workload is not started;
// when none is left, the error names those backends and their plugin.json,
// the step a new workload's backend most often misses
// (docs/adding-a-workload.md), instead of only "run ./setup.sh".
func TestSelectNamesBackendsWhosePluginJSONOmitsTheWorkload(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "plugins", "only-ttt")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"name": "only-ttt", "runtime": "exec", "command": ["false"], "workloads": ["ttt"]}`
	if err := os.WriteFile(filepath.Join(dir, "plugin.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(registry.Options{Root: root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	_, err = selectBackends(context.Background(), &App{Stderr: &errb}, reg, nil, "", bound{}, "gemm")
	if err == nil {
		t.Fatal("no error, want: no backend implements gemm")
	}
	for _, want := range []string{"workload gemm", `plugin.json "workloads" does not list gemm: only-ttt`, "--backends"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
