package store

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
	_ "github.com/xbench/xbench/harness/workload/all"
	"github.com/xbench/xbench/harness/workload/ttt"
)

func TestKey(t *testing.T) {
	tests := []struct {
		backend string
		cfg     result.Config
		want    string
	}{
		{"pytorch/compile", ttt.Config{ModelSize: "125m", TTTType: "mlp", InnerOnly: true, Dtype: "bfloat16", Batch: 1, SeqLen: 2048, MiniBatch: 16, Backbone: "transformer"}.Result(),
			"pytorch+compile__ttt_inner_only_125m_mlp_1_2048_16_bfloat16_transformer"},
		// Declared order (m, n, k, batch, layout, dtype), not map or sorted order.
		{"triton", result.Config{Workload: "gemm", Phase: "forward", Params: map[string]string{"m": "4096", "n": "2048", "k": "1024", "batch": "1", "layout": "nt", "dtype": "float8_e4m3"}},
			"triton__gemm_forward_4096_2048_1024_1_nt_float8_e4m3"},
		// An absolute folder is its base name and a hash of the path, never the path.
		{"candidates", result.Config{Workload: "problem", Phase: "forward", Params: map[string]string{"problems": "/home/someone/KernelBench/KernelBench", "level": "1", "problem": "19", "dtype": "float32"}},
			"candidates__problem_forward_" + PathPart("/home/someone/KernelBench/KernelBench") + "_1_19_float32"},
		// Nothing unsafe reaches the file name.
		{"x", result.Config{Workload: "gemm", Phase: "forward", Params: map[string]string{"m": "../../etc", "n": "a b", "k": "1", "batch": "1", "layout": "nn", "dtype": "float32"}},
			"x__gemm_forward_..+..+etc_a-b_1_1_nn_float32"},
	}
	for _, tt := range tests {
		if got := Key(tt.backend, tt.cfg); got != tt.want {
			t.Errorf("Key = %q, want %q", got, tt.want)
		}
	}
}

func tinyResult(runID, backend string) result.Result {
	return result.Result{SchemaVersion: result.SchemaVersion, RunID: runID, Backend: backend, Status: result.StatusOK, SamplesMs: []float64{1},
		Config: ttt.Config{ModelSize: "tiny", TTTType: "linear", Batch: 1, SeqLen: 16, MiniBatch: 16, Dtype: "float32", Backbone: "transformer", Repeats: 1}.Result(),
		Device: result.Device{Kind: "cpu"}, Env: result.Env{Framework: "go", Timing: "wall"}}
}

// v1Result is a result written before the workload axis (schema 1); it
// must still load, upgraded.
const v1Result = `{"schema_version": 1, "run_id": "old", "backend": "pytorch", "status": "ok",
 "config": {"workload": "ttt", "model_size": "125m", "ttt_type": "mlp", "backward": true, "inner_only": false,
  "batch": 4, "seq_len": 512, "mini_batch": 16, "dtype": "float32", "backbone": "transformer", "warmup": 1, "repeats": 2},
 "device": {"kind": "cuda", "name": "H100", "count": 1}, "samples_ms": [10, 12], "compile_ms": 0,
 "tokens_per_s": 1234.5, "peak_memory_bytes": 0, "num_params": 0, "env": {"framework": "torch", "timing": "cuda events"}}`

func TestWriteReadAll(t *testing.T) {
	dir := t.TempDir()
	path, err := WriteResult(dir, tinyResult("r/1", "b"))
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
	got, skipped, err := ReadAll(dir)
	if err != nil || len(skipped) != 0 || len(got) != 1 || got[0].Backend != "b" || got[0].Config.Get("seq_len") != "16" {
		t.Fatalf("ReadAll = %+v, skipped %v, %v", got, skipped, err)
	}
}

// ReadAll skips a file that is not a valid result and names it in skipped,
// returning every valid one: one bad file never poisons a folder, and is
// never dropped silently either.
func TestReadAllSkipsInvalid(t *testing.T) {
	tests := []struct {
		name    string
		content string
		reason  string // in the skipped entry besides the file name
	}{
		{"truncated.json", `{"status": "ok"`, "JSON"},
		{"wrong-schema.json", `{"schema_version": 2, "status": "splendid"}`, ""},
		{"future.json", `{"schema_version": 99}`, "schema_version 99"},
		{"empty.json", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, b := range []string{"a", "b"} {
				if _, err := WriteResult(dir, tinyResult("run", b)); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "run", "v1.json"), []byte(v1Result), 0o644); err != nil {
				t.Fatal(err)
			}
			bad := filepath.Join(dir, "run", tt.name)
			if err := os.WriteFile(bad, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			// Files ReadAll must not even look at.
			for _, ignored := range []string{".tmp-x.json", "_meta.json", "notes.txt"} {
				if err := os.WriteFile(filepath.Join(dir, "run", ignored), []byte("garbage"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rs, skipped, err := ReadAll(dir)
			if err != nil {
				t.Fatalf("a bad file made ReadAll fail: %v", err)
			}
			if len(skipped) != 1 || !strings.Contains(skipped[0], bad) || !strings.Contains(skipped[0], tt.reason) {
				t.Errorf("skipped = %q, want one entry naming %s and %q", skipped, bad, tt.reason)
			}
			var names []string
			for _, r := range rs {
				names = append(names, r.Backend)
			}
			if strings.Join(names, ",") != "a,b,pytorch" {
				t.Fatalf("valid results read: %v, want a,b,pytorch", names)
			}
			old := rs[2]
			if old.SchemaVersion != result.SchemaVersion || old.Config.Workload != "ttt" || old.Config.Phase != "backward" ||
				old.Config.Get("seq_len") != "512" || old.Config.Get("model_size") != "125m" || old.ThroughputUnit != "tokens/s" ||
				// recomputed from the samples (median 11 ms, 4x512 tokens), not the stored 1234.5
				math.Abs(old.Throughput-2048/0.011) > 1e-6 || old.Stats == nil || old.Stats.MedianMs != 11 {
				t.Errorf("v1 result not upgraded: %+v", old)
			}
		})
	}
}

func TestReadAllMissingFolderIsError(t *testing.T) {
	if _, _, err := ReadAll(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("ReadAll of a missing folder: no error")
	}
}

// PathPart keeps the base name, hides the rest of the path and tells two
// folders of one base name apart.
func TestPathPart(t *testing.T) {
	a, b := PathPart("/home/a/KernelBench"), PathPart("/home/b/KernelBench")
	if !strings.HasPrefix(a, "KernelBench-") || len(a) != len("KernelBench-")+8 || strings.Contains(a, "home") || a == b {
		t.Errorf("PathPart = %q and %q, want KernelBench-<8 hex digits>, different", a, b)
	}
	if PathPart("/home/a/KernelBench/") != a {
		t.Errorf("a trailing slash changed the part: %q", PathPart("/home/a/KernelBench/"))
	}
}

// What a file stores in stats and throughput is never what a reader gets:
// both are recomputed from samples_ms; an ok result whose samples are
// empty, negative or not finite is skipped, named with the reason.
func TestReadRecomputesAndRefusesBadSamples(t *testing.T) {
	dir := t.TempDir()
	good := tinyResult("run", "liar")
	good.SamplesMs = []float64{1, 2, 3}
	good.Stats = &result.Stats{MedianMs: 0.001, MeanMs: 0.001, SampleCount: 3} // contradicts the samples
	good.Throughput = 1e12
	if _, err := WriteResult(dir, good); err != nil {
		t.Fatal(err)
	}
	failed := tinyResult("run", "failed")
	failed.Status, failed.SamplesMs, failed.Message = result.StatusFailed, []float64{}, "boom"
	failed.Stats = &result.Stats{MedianMs: 5}
	if _, err := WriteResult(dir, failed); err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{"negative": "[1, -2]", "empty": "[]"}
	for name, samples := range bad {
		raw, err := json.Marshal(tinyResult("run", name))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(raw), `"samples_ms":[1]`, `"samples_ms":`+samples, 1)
		if err := os.WriteFile(filepath.Join(dir, "run", name+".json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rs, skipped, err := ReadAll(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || len(skipped) != 2 {
		t.Fatalf("read %d, skipped %q; want 2 read and the negative and empty files skipped", len(rs), skipped)
	}
	for _, s := range skipped {
		if !strings.Contains(s, filepath.Join(dir, "run")) || !strings.Contains(s, "samples_ms cannot be trusted") {
			t.Errorf("skipped entry %q does not name its file and reason", s)
		}
	}
	for _, r := range rs {
		switch r.Backend {
		case "liar":
			if r.Stats == nil || r.Stats.MedianMs != 2 || r.Stats.MeanMs != 2 || r.Stats.SampleCount != 3 || r.Throughput == 1e12 {
				t.Errorf("stored stats came through: %+v, throughput %v", r.Stats, r.Throughput)
			}
		case "failed":
			if r.Stats != nil {
				t.Errorf("a failed result kept stats %+v", r.Stats)
			}
		}
	}
}

func TestSafeNameMatchesItsRegexp(t *testing.T) {
	spec := regexp.MustCompile(`[^A-Za-z0-9._+-]+`)
	for _, in := range []string{"", "plain-name_1.2+x", "a b  c", "a/b\\c", "ünïcode façade", "x\x00\xff\xfey", "--==--", "é", "a..b"} {
		if got, want := safeName(in), spec.ReplaceAllString(in, "-"); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}
