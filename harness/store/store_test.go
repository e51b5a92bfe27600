package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
)

func TestKey(t *testing.T) {
	c := result.Config{Workload: "ttt", ModelSize: "125m", TTTType: "mlp", InnerOnly: true, Dtype: "bfloat16", Batch: 1, SeqLen: 2048, MiniBatch: 16, Backbone: "transformer"}
	if got, want := Key("pytorch/compile", c), "pytorch+compile__ttt_125m_mlp_inner_only_bfloat16_b1_l2048_k16"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
}

func TestWriteReadAll(t *testing.T) {
	dir := t.TempDir()
	r := result.Result{SchemaVersion: 1, RunID: "r/1", Backend: "b", Status: result.StatusOK, SamplesMs: []float64{1},
		Config: result.Config{Workload: "ttt", ModelSize: "tiny", TTTType: "linear", Batch: 1, SeqLen: 16, MiniBatch: 16, Dtype: "float32", Backbone: "transformer", Repeats: 1},
		Device: result.Device{Kind: "cpu"}, Env: result.Env{Framework: "go", Timing: "wall"}}
	path, err := WriteResult(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(path, filepath.Join(dir, "r-1")) {
		t.Errorf("run id not made safe in %s", path)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, "r-1", ".tmp-*"))
	if len(leftovers) > 0 {
		t.Errorf("temp files left behind: %v", leftovers)
	}
	got, err := ReadAll(dir)
	if err != nil || len(got) != 1 || got[0].Backend != "b" {
		t.Fatalf("ReadAll = %+v, %v", got, err)
	}
	// A corrupt result is an error naming the file, never silently dropped.
	bad := filepath.Join(dir, "r-1", "bad.json")
	if err := os.WriteFile(bad, []byte(`{"status": "ok"`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadAll(dir); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("corrupt file not reported: %v", err)
	}
}
