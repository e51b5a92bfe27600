package workload_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	_ "github.com/xbench/xbench/harness/workload/all"
	"github.com/xbench/xbench/harness/workload/ttt"
)

func lookup(t *testing.T, name string) workload.Workload {
	t.Helper()
	w, err := workload.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestResolveFillsDefaultsAndCanonicalises(t *testing.T) {
	tests := []struct {
		name     string
		workload string
		phase    string
		set      map[string]string
		want     map[string]string // a subset of the resolved parameters
		wantPh   string
	}{
		{"ttt defaults", "ttt", "", nil,
			map[string]string{"model_size": "125m", "ttt_type": "linear", "batch": "1", "seq_len": "2048", "mini_batch": "16", "dtype": "float32", "backbone": "transformer"}, "forward"},
		{"alias 1.3b", "ttt", "backward", map[string]string{"model_size": "1.3b"}, map[string]string{"model_size": "1b"}, "backward"},
		{"int with space", "ttt", "", map[string]string{"seq_len": " 64"}, map[string]string{"seq_len": "64"}, "forward"},
		{"int leading zeros", "ttt", "", map[string]string{"seq_len": "0064"}, map[string]string{"seq_len": "64"}, "forward"},
		{"gemm defaults", "gemm", "", map[string]string{"m": "96"},
			map[string]string{"m": "96", "n": "512", "k": "512", "batch": "1", "layout": "nn", "dtype": "float32"}, "forward"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := lookup(t, tt.workload)
			cfg, err := workload.Resolve(w, tt.phase, tt.set, 2, 5)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Workload != tt.workload || cfg.Phase != tt.wantPh || cfg.Warmup != 2 || cfg.Repeats != 5 {
				t.Errorf("resolved %+v", cfg)
			}
			if len(cfg.Params) != len(w.Params()) {
				t.Errorf("%d parameters resolved, want every one of the %d declared: %v", len(cfg.Params), len(w.Params()), cfg.Params)
			}
			for k, v := range tt.want {
				if cfg.Params[k] != v {
					t.Errorf("%s = %q, want %q", k, cfg.Params[k], v)
				}
			}
			if err := workload.Recheck(cfg); err != nil {
				t.Errorf("a resolved configuration fails Recheck: %v", err)
			}
		})
	}
}

func TestResolveRefuses(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	tests := []struct {
		name     string
		workload string
		phase    string
		set      map[string]string
		warmup   int
		repeats  int
		want     []string // each in the error
		check    bool     // a CheckError rather than a ValueError
	}{
		{"unknown parameter", "ttt", "", map[string]string{"layout": "nn"}, 0, 1, []string{"--layout", "no such parameter", "--seq-len"}, false},
		{"gemm parameter on ttt", "ttt", "", map[string]string{"m": "1"}, 0, 1, []string{"--m ", "ttt"}, false},
		{"phase not declared", "gemm", "backward", nil, 0, 1, []string{"--phase", `"backward"`, "allowed: forward"}, false},
		{"ttt phase both", "ttt", "both", nil, 0, 1, []string{"--phase", "forward, backward, inner_only"}, false},
		{"int out of range", "gemm", "", map[string]string{"m": "0"}, 0, 1, []string{"--m", `"0"`, "integers 1 to 1048576"}, false},
		{"int above max", "ttt", "", map[string]string{"batch": "65537"}, 0, 1, []string{"--batch", `"65537"`, "integers 1 to 65536"}, false},
		{"int past int64", "ttt", "", map[string]string{"seq_len": "99999999999999999999"}, 0, 1, []string{"--seq-len", "99999999999999999999"}, false},
		{"not an int", "ttt", "", map[string]string{"seq_len": "64k"}, 0, 1, []string{"--seq-len", `"64k"`}, false},
		{"enum", "gemm", "", map[string]string{"layout": "xy"}, 0, 1, []string{"--layout", `"xy"`, "nn, nt, tn, tt"}, false},
		{"repeats 0", "ttt", "", nil, 0, 0, []string{"--repeats", "0"}, false},
		{"warmup negative", "ttt", "", nil, -1, 1, []string{"--warmup", "-1"}, false},
		{"rule between parameters", "ttt", "", map[string]string{"seq_len": "100"}, 0, 1, []string{"--seq-len 100", "--mini-batch 16"}, true},
		{"gemm too many elements", "gemm", "", map[string]string{"m": "1048576", "k": "1048576"}, 0, 1, []string{"--batch --m --k", "2^34"}, true},
		{"100 kB value", "gemm", "", map[string]string{"layout": long}, 0, 1, []string{"--layout", `"` + strings.Repeat("x", 80) + `..."`}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := workload.Resolve(lookup(t, tt.workload), tt.phase, tt.set, tt.warmup, tt.repeats)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", workload.Cut(err.Error(), 300), w)
				}
			}
			if !workload.IsInputError(err) {
				t.Errorf("%v is not an input error", err)
			}
			var ce *workload.CheckError
			if errors.As(err, &ce) != tt.check {
				t.Errorf("CheckError %v, want %v (%T)", errors.As(err, &ce), tt.check, err)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error is %d bytes long: input echoed whole", len(err.Error()))
			}
		})
	}
}

func TestLookupUnknown(t *testing.T) {
	_, err := workload.Lookup("nope")
	if err == nil || !strings.Contains(err.Error(), "--workload") || !strings.Contains(err.Error(), strings.Join(workload.Names(), ", ")) || !workload.IsInputError(err) {
		t.Fatalf("Lookup(nope) = %v", err)
	}
}

func TestKeyStableInDeclaredOrder(t *testing.T) {
	c := ttt.Config{ModelSize: "125m", TTTType: "mlp", Batch: 2, SeqLen: 512, MiniBatch: 16, Dtype: "bfloat16", Backbone: "transformer", Warmup: 9, Repeats: 9}.Result()
	want := "workload=ttt phase=forward model_size=125m ttt_type=mlp batch=2 seq_len=512 mini_batch=16 dtype=bfloat16 backbone=transformer"
	g := result.Config{Workload: "gemm", Phase: "forward", Params: map[string]string{"dtype": "float16", "layout": "tn", "batch": "3", "k": "7", "n": "6", "m": "5"}}
	wantG := "workload=gemm phase=forward m=5 n=6 k=7 batch=3 layout=tn dtype=float16"
	unknown := result.Config{Workload: "other", Phase: "forward", Params: map[string]string{"z": "1", "a": "2"}}
	for i := 0; i < 20; i++ { // map order must never leak in
		if got := workload.Key(c); got != want {
			t.Fatalf("Key = %q, want %q", got, want)
		}
		if got := workload.Key(g); got != wantG {
			t.Fatalf("Key = %q, want %q", got, wantG)
		}
		if got := workload.Key(unknown); got != "workload=other phase=forward a=2 z=1" {
			t.Fatalf("Key of an unregistered workload = %q, want sorted parameters", got)
		}
	}
	// Warmup and repeats are not part of what is measured.
	c2 := c
	c2.Warmup, c2.Repeats = 0, 1
	if workload.Key(c2) != want {
		t.Errorf("Key depends on warmup/repeats: %q", workload.Key(c2))
	}
	if workload.Key(c.With("seq_len", "1024")) == want || workload.Key(func() result.Config { x := c.Clone(); x.Phase = "backward"; return x }()) == want {
		t.Error("Key ignores a parameter or the phase")
	}
}

func TestLabel(t *testing.T) {
	tests := []struct {
		cfg  result.Config
		want string
	}{
		{ttt.Config{ModelSize: "tiny", TTTType: "linear", Batch: 1, SeqLen: 64, MiniBatch: 16, Dtype: "float32", Backbone: "transformer"}.Result(), "tiny linear float32 L=64"},
		{ttt.Config{ModelSize: "125m", TTTType: "mlp", Backward: true, Batch: 4, SeqLen: 512, MiniBatch: 32, Dtype: "bfloat16", Backbone: "mamba"}.Result(), "125m mlp bfloat16 L=512 B=4 K=32 mamba backward"},
		{result.Config{Workload: "gemm", Phase: "forward", Params: map[string]string{"m": "5", "n": "6", "k": "7", "batch": "3", "layout": "tn", "dtype": "float16"}}, "5x6x7 b3 tn float16"},
	}
	for _, tt := range tests {
		if got := workload.Label(tt.cfg); got != tt.want {
			t.Errorf("Label = %q, want %q", got, tt.want)
		}
	}
}

func TestAtLeastAsLarge(t *testing.T) {
	cfg := func(size string, seq int, mut ...func(*ttt.Config)) result.Config {
		c := ttt.Config{ModelSize: size, TTTType: "linear", Batch: 1, SeqLen: seq, MiniBatch: 16, Dtype: "float32", Backbone: "transformer", Repeats: 1}
		for _, m := range mut {
			m(&c)
		}
		return c.Result()
	}
	backward := func(c *ttt.Config) { c.Backward = true }
	inner := func(c *ttt.Config) { c.InnerOnly = true }
	bf16 := func(c *ttt.Config) { c.Dtype = "bfloat16" }
	mlp := func(c *ttt.Config) { c.TTTType = "mlp" }
	gemmCfg := func(m, n string) result.Config {
		return result.Config{Workload: "gemm", Phase: "forward", Params: map[string]string{"m": m, "n": n, "k": "64", "batch": "1", "layout": "nn", "dtype": "float32"}}
	}
	tests := []struct {
		name       string
		big, small result.Config
		want       bool
	}{
		{"same", cfg("125m", 512), cfg("125m", 512), true},
		{"longer", cfg("125m", 2048), cfg("125m", 512), true},
		{"shorter", cfg("125m", 512), cfg("125m", 2048), false},
		{"bigger model", cfg("350m", 512), cfg("125m", 512), true},
		{"350m@512 vs 125m@2048", cfg("350m", 512), cfg("125m", 2048), false},
		{"125m@2048 vs 350m@512", cfg("125m", 2048), cfg("350m", 512), false},
		{"mlp over linear", cfg("125m", 512, mlp), cfg("125m", 512), true},
		{"linear over mlp", cfg("125m", 512), cfg("125m", 512, mlp), false},
		{"other dtype, larger", cfg("350m", 4096, bf16), cfg("125m", 512), false},
		{"other dtype, reversed", cfg("350m", 4096), cfg("125m", 512, bf16), false},
		{"backward over forward", cfg("125m", 512, backward), cfg("125m", 512), true},
		{"forward over backward", cfg("125m", 512), cfg("125m", 512, backward), false},
		{"forward over inner_only", cfg("125m", 512), cfg("125m", 512, inner), true},
		{"inner_only over forward", cfg("125m", 512, inner), cfg("125m", 512), false},
		{"other workload", gemmCfg("512", "512"), cfg("125m", 512), false},
		{"gemm larger m and n", gemmCfg("1024", "1024"), gemmCfg("512", "512"), true},
		{"gemm m larger, n smaller", gemmCfg("1024", "256"), gemmCfg("512", "512"), false},
		{"gemm other layout", gemmCfg("1024", "1024").With("layout", "tt"), gemmCfg("512", "512"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := workload.AtLeastAsLarge(tt.big, tt.small); got != tt.want {
				t.Errorf("AtLeastAsLarge(%s, %s) = %v, want %v", workload.Label(tt.big), workload.Label(tt.small), got, tt.want)
			}
		})
	}
}

func TestIsInputError(t *testing.T) {
	ve := &workload.ValueError{Flag: "--m", Value: "0", Allowed: "integers 1 to 2"}
	ce := &workload.CheckError{Err: errors.New("--seq-len 100 is not a multiple of --mini-batch 16")}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"ValueError", ve, true},
		{"CheckError", ce, true},
		{"wrapped ValueError", fmt.Errorf("run: %w", ve), true},
		{"wrapped CheckError", fmt.Errorf("sweep file: %w", ce), true},
		{"plain error", errors.New("--m 0 is not allowed"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		if got := workload.IsInputError(tt.err); got != tt.want {
			t.Errorf("%s: IsInputError = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !errors.Is(ce, ce.Err) || ce.Error() != ce.Err.Error() {
		t.Error("CheckError does not wrap its error")
	}
	if got := ve.Error(); got != `--m "0" is not allowed (allowed: integers 1 to 2)` {
		t.Errorf("ValueError = %q", got)
	}
}

func TestCut(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		want string
	}{
		{"abc", 80, "abc"},
		{strings.Repeat("y", 80), 80, strings.Repeat("y", 80)},
		{strings.Repeat("y", 81), 80, strings.Repeat("y", 80) + "..."},
		{strings.Repeat("z", 100_000), 80, strings.Repeat("z", 80) + "..."},
	} {
		if got := workload.Cut(tt.in, tt.n); got != tt.want {
			t.Errorf("Cut(%d bytes) = %d bytes", len(tt.in), len(got))
		}
	}
}
