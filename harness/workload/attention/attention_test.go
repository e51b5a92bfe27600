package attention

import (
	"math"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// resolve is Resolve with the given phase ("" for the default) and timing counts.
func resolve(t *testing.T, phase string, set map[string]string) result.Config {
	t.Helper()
	cfg, err := workload.Resolve(Workload{}, phase, set, 3, 10)
	if err != nil {
		t.Fatalf("Resolve(%s, %v): %v", phase, set, err)
	}
	return cfg
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		phase   string
		set     map[string]string
		want    map[string]string // checked when wantErr is empty
		wantErr []string          // every one must appear in the error
	}{
		{name: "defaults", want: map[string]string{"batch": "4", "heads": "32", "kv_heads": "0", "seq_len": "4096",
			"kv_len": "0", "head_dim": "128", "causal": "false", "dtype": "bfloat16"}},
		{name: "alias, canonical int, bool", set: map[string]string{"dtype": "fp16", "head_dim": " 064", "causal": "1"},
			want: map[string]string{"head_dim": "64", "causal": "true", "dtype": "float16"}},
		{name: "GQA", set: map[string]string{"heads": "32", "kv_heads": "8"}, want: map[string]string{"kv_heads": "8"}},
		{name: "cross attention", set: map[string]string{"seq_len": "100", "kv_len": "300"}, want: map[string]string{"kv_len": "300"}},
		{name: "causal with kv_len = seq_len", set: map[string]string{"seq_len": "100", "kv_len": "100", "causal": "true"},
			want: map[string]string{"kv_len": "100"}},
		{name: "backward phase", phase: workload.PhaseBackward, want: map[string]string{"head_dim": "128"}},
		{name: "head_dim 0", set: map[string]string{"head_dim": "0"}, wantErr: []string{"--head-dim", `"0"`, "integers 1 to 256"}},
		{name: "head_dim 512", set: map[string]string{"head_dim": "512"}, wantErr: []string{"--head-dim", `"512"`, "1 to 256"}},
		{name: "kv_heads not dividing", set: map[string]string{"heads": "32", "kv_heads": "6"},
			wantErr: []string{"--heads --kv-heads", `"32 6"`, "kv_heads dividing heads"}},
		{name: "kv_heads above heads", set: map[string]string{"heads": "4", "kv_heads": "8"},
			wantErr: []string{"--heads --kv-heads", `"4 8"`}},
		{name: "causal cross", set: map[string]string{"seq_len": "100", "kv_len": "300", "causal": "true"},
			wantErr: []string{"--causal --seq-len --kv-len", `"true 100 300"`, "kv_len equal to seq_len"}},
		{name: "seq_len too large", set: map[string]string{"seq_len": "1048577"}, wantErr: []string{"--seq-len", "1 to 1048576"}},
		{name: "q too large", set: map[string]string{"batch": "65536", "heads": "1024", "seq_len": "1024", "head_dim": "128"},
			wantErr: []string{"--batch --heads --seq-len --head-dim", "q (and out)", "2^34"}},
		{name: "k too large", set: map[string]string{"batch": "1", "heads": "1", "seq_len": "1", "kv_len": "1048576", "head_dim": "256", "kv_heads": "0"},
			wantErr: nil, want: map[string]string{"kv_len": "1048576"}},
		{name: "k over 2^34", set: map[string]string{"batch": "128", "heads": "1", "seq_len": "1", "kv_len": "1048576", "head_dim": "256"},
			wantErr: []string{"--batch --kv-heads --kv-len --head-dim", "k (and v)", "2^34"}},
		{name: "FLOPs overflow", set: map[string]string{"batch": "65536", "heads": "1024", "seq_len": "1048576", "kv_len": "1048576", "head_dim": "256"},
			wantErr: []string{"--batch --heads --seq-len --kv-len --head-dim", "below 2^63"}},
		{name: "bad dtype", set: map[string]string{"dtype": "float8_e4m3"}, wantErr: []string{"--dtype", "float32, bfloat16, float16"}},
		{name: "bad phase", phase: workload.PhaseInnerOnly, wantErr: []string{"--phase", "forward, backward, both"}},
		{name: "unknown parameter", set: map[string]string{"m": "8"}, wantErr: []string{"--m"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := workload.Resolve(Workload{}, tc.phase, tc.set, 3, 10)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("accepted %v", tc.set)
				}
				if !workload.IsInputError(err) {
					t.Errorf("error %v is not an input error (exit 2)", err)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not name %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if cfg.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, cfg.Get(k), v)
				}
			}
		})
	}
}

func TestShapeAndLabel(t *testing.T) {
	tests := []struct {
		set   map[string]string
		label string
		group int
	}{
		{map[string]string{"causal": "true"}, "b4 h32 s4096 d128 causal bfloat16", 1},
		{map[string]string{"heads": "32", "kv_heads": "8", "batch": "1"}, "b1 h32/8 s4096 d128 bfloat16", 4},
		{map[string]string{"seq_len": "128", "kv_len": "1024", "dtype": "float32", "heads": "8", "kv_heads": "1"}, "b4 h8/1 s128 kv1024 d128 float32", 8},
		{map[string]string{"seq_len": "128", "kv_len": "128", "kv_heads": "32"}, "b4 h32 s128 d128 bfloat16", 1},
	}
	for _, tc := range tests {
		cfg := resolve(t, "", tc.set)
		if got := (Workload{}).Label(cfg); got != tc.label {
			t.Errorf("Label(%v) = %q, want %q", tc.set, got, tc.label)
		}
		if g := ShapeOf(cfg).Group(); g != tc.group {
			t.Errorf("Group(%v) = %d, want %d", tc.set, g, tc.group)
		}
	}
	s := ShapeOf(resolve(t, "", map[string]string{"batch": "2", "heads": "6", "kv_heads": "3", "seq_len": "5", "head_dim": "7"}))
	if q, k := s.QShape(), s.KShape(); q[0] != 2 || q[1] != 6 || q[2] != 5 || q[3] != 7 || k[1] != 3 || k[2] != 5 {
		t.Errorf("shapes %v %v", q, k)
	}
}

// Worked by hand: b2 h8/2 s1024 d64, bfloat16. F = 4·2·8·1024·1024·64 =
// 4294967296; Q = 2·8·1024·64 = 1048576, K = 2·2·1024·64 = 262144.
func TestCost(t *testing.T) {
	set := map[string]string{"batch": "2", "heads": "8", "kv_heads": "2", "seq_len": "1024", "head_dim": "64", "dtype": "bfloat16"}
	const F, Q, K = 4294967296.0, 1048576.0, 262144.0
	tests := []struct {
		phase  string
		causal string
		dtype  string
		flops  float64
		bytes  float64
	}{
		{"forward", "false", "bfloat16", F, (2*Q + 2*K) * 2},
		{"forward", "true", "bfloat16", F / 2, (2*Q + 2*K) * 2},
		{"backward", "false", "bfloat16", 2.5 * F, (4*Q + 4*K) * 2},
		{"both", "true", "float32", 3.5 * F / 2, (4*Q + 4*K) * 4},
	}
	for _, tc := range tests {
		s := map[string]string{"causal": tc.causal, "dtype": tc.dtype}
		for k, v := range set {
			if _, ok := s[k]; !ok {
				s[k] = v
			}
		}
		cfg := resolve(t, tc.phase, s)
		c, err := Workload{}.Cost(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if c.FLOPs != tc.flops || c.Bytes != tc.bytes {
			t.Errorf("%s causal=%s %s: cost %v FLOPs %v bytes, want %v, %v", tc.phase, tc.causal, tc.dtype, c.FLOPs, c.Bytes, tc.flops, tc.bytes)
		}
		if r := (Workload{}).Rank(cfg); r != tc.flops {
			t.Errorf("Rank = %v, want the FLOPs %v", r, tc.flops)
		}
		tp := Workload{}.Throughput(cfg, 2)
		if tp.Unit != "TFLOP/s" || math.Abs(tp.Value-tc.flops/2e-3/1e12) > 1e-12 {
			t.Errorf("Throughput = %v", tp)
		}
	}
	if tp := (Workload{}).Throughput(resolve(t, "", nil), 0); tp.Value != 0 {
		t.Errorf("Throughput at 0 ms = %v, want 0", tp.Value)
	}
}

// A larger sequence is at least as large for the OOM skip; a different
// kv_heads is not comparable (its 0 means "heads"). AtLeastAsLarge looks
// the workload up by name, so this test binary registers it (the harness
// does in harness/workload/all, which imports this package).
func TestSizeAxes(t *testing.T) {
	if _, err := workload.Lookup(Name); err != nil {
		workload.Register(Workload{})
	}
	small := resolve(t, "", map[string]string{"seq_len": "1024"})
	big := resolve(t, "", map[string]string{"seq_len": "2048", "head_dim": "256"})
	if !workload.AtLeastAsLarge(big, small) || workload.AtLeastAsLarge(small, big) {
		t.Error("seq_len/head_dim are not size axes")
	}
	gqa := resolve(t, "", map[string]string{"seq_len": "2048", "kv_heads": "8"})
	if workload.AtLeastAsLarge(gqa, small) {
		t.Error("kv_heads 8 counted as at least kv_heads 0 (= heads)")
	}
	bwd := resolve(t, workload.PhaseBackward, map[string]string{"seq_len": "1024"})
	if !workload.AtLeastAsLarge(bwd, small) || workload.AtLeastAsLarge(small, bwd) {
		t.Error("backward not larger than forward")
	}
}

// The verify defaults are odd sizes with GQA, and pass Check.
func TestSmallDefaults(t *testing.T) {
	cfg := resolve(t, workload.PhaseBoth, Workload{}.SmallDefaults())
	s := ShapeOf(cfg)
	if s.KVHeads == s.Heads || s.SeqLen%16 == 0 || s.HeadDim%16 == 0 {
		t.Errorf("small defaults %+v: want GQA and sizes that are not multiples of 16", s)
	}
	if s.Batch*s.Heads*s.SeqLen*s.KVLen*s.HeadDim > 1<<22 {
		t.Errorf("small defaults %+v are not small", s)
	}
}
