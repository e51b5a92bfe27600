package sweep

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/ttt"
)

func cfg(size, tttType string, seq int, dtype string) result.Config {
	return ttt.Config{ModelSize: size, TTTType: tttType, Batch: 1, SeqLen: seq, MiniBatch: 16,
		Dtype: dtype, Backbone: "transformer", Warmup: 0, Repeats: 3}.Result()
}

// set returns c with parameters changed, as key, value pairs.
func set(c result.Config, kv ...string) result.Config {
	for i := 0; i+1 < len(kv); i += 2 {
		c = c.With(kv[i], kv[i+1])
	}
	return c
}

func cell(backend, size string, seq int) Cell {
	return Cell{Backend: backend, Device: "cpu", Config: cfg(size, "linear", seq, "float32")}
}

func TestAtLeastAsLarge(t *testing.T) {
	base := cell("b", "125m", 512)
	mod := func(f func(c *Cell)) Cell { c := base; f(&c); return c }
	tests := []struct {
		name string
		big  Cell
		want bool
	}{
		{"same cell", base, true},
		{"longer", mod(func(c *Cell) { c.Config = set(c.Config, "seq_len", "1024") }), true},
		{"shorter", mod(func(c *Cell) { c.Config = set(c.Config, "seq_len", "256") }), false},
		{"bigger model", mod(func(c *Cell) { c.Config = set(c.Config, "model_size", "350m") }), true},
		{"bigger model, shorter", mod(func(c *Cell) { c.Config = set(c.Config, "model_size", "350m", "seq_len", "256") }), false},
		{"mlp", mod(func(c *Cell) { c.Config = set(c.Config, "ttt_type", "mlp") }), true},
		{"backward", mod(func(c *Cell) { c.Config.Phase = "backward" }), true},
		{"inner only", mod(func(c *Cell) { c.Config.Phase = "inner_only" }), false},
		{"bigger batch", mod(func(c *Cell) { c.Config = set(c.Config, "batch", "4") }), true},
		{"other dtype", mod(func(c *Cell) { c.Config = set(c.Config, "dtype", "bfloat16", "seq_len", "4096") }), false},
		{"other backend", mod(func(c *Cell) { c.Backend = "c"; c.Config = set(c.Config, "seq_len", "4096") }), false},
		{"other device", mod(func(c *Cell) { c.Device = "cuda"; c.Config = set(c.Config, "seq_len", "4096") }), false},
		{"other mini-batch", mod(func(c *Cell) { c.Config = set(c.Config, "mini_batch", "32", "seq_len", "4096") }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AtLeastAsLarge(tt.big, base); got != tt.want {
				t.Errorf("AtLeastAsLarge(%s, %s) = %v, want %v", Describe(tt.big), Describe(base), got, tt.want)
			}
		})
	}
}

func TestOrderIsCheapFirstAndStable(t *testing.T) {
	cells := []Cell{cell("b", "350m", 512), cell("b", "125m", 2048), cell("a", "125m", 512), cell("b", "125m", 512), cell("b", "tiny", 4096)}
	Order(cells)
	for i := 1; i < len(cells); i++ {
		if cells[i-1].Cost() > cells[i].Cost() {
			t.Errorf("cell %d (%s) costs more than cell %d (%s)", i-1, Describe(cells[i-1]), i, Describe(cells[i]))
		}
	}
	if cells[0].Config.Get("model_size") != "tiny" || cells[1].Backend != "a" || cells[2].Backend != "b" {
		t.Errorf("order %v: want tiny first, then the 125m/512 tie broken by key (a before b)", keys(cells))
	}
	again := append([]Cell(nil), cells...)
	again[0], again[4] = again[4], again[0]
	Order(again)
	if !reflect.DeepEqual(keys(again), keys(cells)) {
		t.Errorf("order depends on the input order: %v vs %v", keys(again), keys(cells))
	}
}

func keys(cells []Cell) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = c.Key()
	}
	return out
}

func TestShardsPartitionThePlan(t *testing.T) {
	var plan []Cell
	for i := 1; i <= 10; i++ {
		plan = append(plan, cell("b", "tiny", 16*i))
	}
	for _, n := range []int{1, 3, 4, 10, 12} {
		seen := map[string]int{}
		for i := 0; i < n; i++ {
			for _, c := range Shard(plan, i, n) {
				seen[c.Key()]++
			}
		}
		if len(seen) != len(plan) {
			t.Errorf("%d shards cover %d of %d cells", n, len(seen), len(plan))
		}
		for k, times := range seen {
			if times != 1 {
				t.Errorf("%d shards: cell %s in %d shards", n, k, times)
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	tests := []struct {
		in       string
		i, n     int
		wantFail bool
	}{
		{"0/4", 0, 4, false}, {"3/4", 3, 4, false}, {"0/1", 0, 1, false},
		{"4/4", 0, 0, true}, {"-1/4", 0, 0, true}, {"1/0", 0, 0, true}, {"1", 0, 0, true}, {"a/b", 0, 0, true},
	}
	for _, tt := range tests {
		i, n, err := ParseShard(tt.in)
		if (err != nil) != tt.wantFail || i != tt.i || n != tt.n {
			t.Errorf("ParseShard(%q) = %d, %d, %v; want %d, %d, fail %v", tt.in, i, n, err, tt.i, tt.n, tt.wantFail)
		}
	}
}

func TestLoadFile(t *testing.T) {
	allowed := []string{"backends", "seq-len", "dtype", "timeout", "backward"}
	tests := []struct {
		name, body string
		want       map[string]string
		wantErr    string
	}{
		{"lists and scalars", `{"backends": "pytorch", "seq-len": [512, 1024], "dtype": ["float32", "bfloat16"], "timeout": "10m", "backward": true}`,
			map[string]string{"backends": "pytorch", "seq-len": "512,1024", "dtype": "float32,bfloat16", "timeout": "10m", "backward": "true"}, ""},
		{"number", `{"seq-len": 2048}`, map[string]string{"seq-len": "2048"}, ""},
		{"unknown key", `{"seq_len": 2048}`, nil, `key "seq_len" is not allowed`},
		{"nested list", `{"seq-len": [[1]]}`, nil, "lists may not nest"},
		{"empty list", `{"seq-len": []}`, nil, "empty list"},
		{"object value", `{"seq-len": {"a": 1}}`, nil, "must be a string"},
		{"not an object", `[1, 2]`, nil, "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sweep.json")
			if err := os.WriteFile(path, []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := LoadFile(path, allowed)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("LoadFile = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name       string
		in         result.Result
		wantStatus result.Status
	}{
		{"torch error", result.Result{Status: result.StatusFailed, Message: "run: backend error: RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"}, result.StatusOOM},
		{"jax", result.Result{Status: result.StatusFailed, Message: "XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate"}, result.StatusOOM},
		{"hip", result.Result{Status: result.StatusFailed, Message: "hipErrorOutOfMemory"}, result.StatusOOM},
		{"only in the output", result.Result{Status: result.StatusFailed, Message: "backend process exited", Tail: "torch.OutOfMemoryError: ..."}, result.StatusOOM},
		{"other failure", result.Result{Status: result.StatusFailed, Message: "shape mismatch"}, result.StatusFailed},
		{"timeout stays", result.Result{Status: result.StatusTimeout, Tail: "CUDA out of memory"}, result.StatusTimeout},
		{"ok stays", result.Result{Status: result.StatusOK, Tail: "out of memory warning"}, result.StatusOK},
	}
	for _, tt := range tests {
		if got := bench.Classify(tt.in).Status; got != tt.wantStatus {
			t.Errorf("%s: Classify status %s, want %s", tt.name, got, tt.wantStatus)
		}
	}
}

func TestPinEnv(t *testing.T) {
	want := []string{"CUDA_VISIBLE_DEVICES=3", "ROCR_VISIBLE_DEVICES=3", "HIP_VISIBLE_DEVICES=0"}
	if got := PinEnv("3"); !reflect.DeepEqual(got, want) {
		t.Errorf("PinEnv(3) = %v, want %v", got, want)
	}
}

func TestSlurmScript(t *testing.T) {
	j := SlurmJob{Xbench: "/opt/x bench/xbench", Root: "/repo", WorkDir: "/repo", Dir: "/shared/sweep", SweepFile: "/shared/sweep/_slurm/_sweep.json", Tasks: 4, Force: true}
	s := j.Script()
	for _, want := range []string{"#SBATCH --array=0-3", "#SBATCH --output=/shared/sweep/_slurm/task-%A_%a.out",
		`exec '/opt/x bench/xbench' sweep --config '/shared/sweep/_slurm/_sweep.json' --results '/shared/sweep' --shard "${SLURM_ARRAY_TASK_ID}/4" --force`,
		"export XBENCH_ROOT='/repo'"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
}

type recordSink struct{ levels map[string]hclog.Level }

func (r *recordSink) Accept(_ string, level hclog.Level, msg string, _ ...interface{}) {
	r.levels[msg] = level
}

func TestQuietDemotesOnlyPluginExits(t *testing.T) {
	rec := &recordSink{levels: map[string]hclog.Level{}}
	q := Quiet(rec)
	q.Accept("xbench.b", hclog.Error, "plugin process exited")
	q.Accept("xbench.b", hclog.Warn, "plugin failed to exit gracefully")
	q.Accept("xbench.b.xbench", hclog.Error, "panic: boom")
	want := map[string]hclog.Level{"plugin process exited": hclog.Debug, "plugin failed to exit gracefully": hclog.Debug, "panic: boom": hclog.Error}
	if !reflect.DeepEqual(rec.levels, want) {
		t.Errorf("levels %v, want %v", rec.levels, want)
	}
}
