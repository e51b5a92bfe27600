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

// A script that names the commit its binaries came from (XBENCH_GIT_COMMIT)
// is believed over the tree's git, which on the device machine can be an
// older commit's; without it the tree's own commit is recorded.
func TestSessionMetaCommit(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Open(registry.Options{Root: root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("XBENCH_GIT_COMMIT", "a23382a0c0de")
	if got := sessionMeta(root, reg).GitCommit; got != "a23382a0c0de" {
		t.Errorf("with XBENCH_GIT_COMMIT set: commit %q, want the variable's", got)
	}
	t.Setenv("XBENCH_GIT_COMMIT", "")
	if got := sessionMeta(root, reg).GitCommit; got == "a23382a0c0de" {
		t.Errorf("without XBENCH_GIT_COMMIT: commit %q", got)
	}
}
