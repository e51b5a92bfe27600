package ttt

import (
	"slices"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/tensorfile"
)

func TestLookupSize(t *testing.T) {
	tests := []struct {
		name, want string
		wantErr    bool
	}{
		{"tiny", "tiny", false},
		{"125m", "125m", false},
		{"1.3b", "1b", false},
		{"1B", "1b", false},
		{"7b", "", true},
	}
	for _, tc := range tests {
		s, err := LookupSize(tc.name)
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), "tiny, 125m, 350m, 760m, 1b") {
				t.Errorf("LookupSize(%q) err = %v, want one listing the allowed names", tc.name, err)
			}
			continue
		}
		if err != nil || s.Name != tc.want || s.Hidden != s.Heads*s.HeadDim {
			t.Errorf("LookupSize(%q) = %+v, %v", tc.name, s, err)
		}
	}
	if got := SizeNames(); !slices.Equal(got, []string{"tiny", "125m", "350m", "760m", "1b"}) {
		t.Errorf("SizeNames() = %v", got)
	}
}

func TestParams(t *testing.T) {
	tiny, _ := LookupSize("tiny")
	tests := []struct {
		ttt, backbone string
		want          map[string][]int
		absent        []string
		count         int64
	}{
		{"linear", "transformer", map[string][]int{
			"embed": {256, 64}, "layers.1.ttt.W1": {4, 16, 16}, "layers.0.ttt.tok_delta": {16},
			"layers.0.mlp.w_down": {128, 64}, "layers.0.ttt.lr_w": {4, 64}, "final_norm": {64},
		}, []string{"layers.0.ttt.W2", "layers.0.ttt.wg", "layers.2.ttt.wq"},
			// embed + 2 * (norms 2C + 4C^2 + lr 4C+4 + tok 16 + ln 2*64 + W1 4*256 + b1 64 + post 2C + MLP 3*C*I) + C
			256*64 + 2*(128+4*4096+260+16+128+1024+64+128+3*8192) + 64},
		{"mlp", "transformer", map[string][]int{
			"layers.0.ttt.W1": {4, 16, 64}, "layers.0.ttt.b1": {4, 64}, "layers.0.ttt.W2": {4, 64, 16}, "layers.0.ttt.b2": {4, 16},
		}, nil, 0},
		{"linear", "mamba", map[string][]int{
			"layers.0.conv_w": {64, 4}, "layers.0.ttt.wg": {64, 64}, "layers.0.ttt.conv_k_b": {64},
		}, []string{"layers.0.ttt.wk"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.ttt+"/"+tc.backbone, func(t *testing.T) {
			ps := Params(tiny, tc.ttt, 16, tc.backbone)
			byName := map[string]Param{}
			for _, p := range ps {
				if _, dup := byName[p.Name]; dup {
					t.Fatalf("duplicate parameter %q", p.Name)
				}
				byName[p.Name] = p
			}
			for name, shape := range tc.want {
				if p, ok := byName[name]; !ok || !slices.Equal(p.Shape, shape) {
					t.Errorf("%s = %v (present %v), want shape %v", name, p.Shape, ok, shape)
				}
			}
			for _, name := range tc.absent {
				if _, ok := byName[name]; ok {
					t.Errorf("%s present, want absent", name)
				}
			}
			if tc.count != 0 {
				if got := NumParams(tiny, tc.ttt, 16, tc.backbone); got != tc.count {
					t.Errorf("NumParams = %d, want %d", got, tc.count)
				}
			}
		})
	}
	if got, want := NumInnerParams(tiny, "mlp", 16), int64(16+64+64+4*16*64+4*64+4*64*16+4*16); got != want {
		t.Errorf("NumInnerParams(mlp) = %d, want %d", got, want)
	}
	if BaseLR("linear") != 1 || BaseLR("mlp") != 0.1 {
		t.Errorf("BaseLR = %v, %v", BaseLR("linear"), BaseLR("mlp"))
	}
}

func floats(t *testing.T, x tensorfile.Tensor) []float64 {
	t.Helper()
	v, err := x.Float64s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestWeights(t *testing.T) {
	tiny, _ := LookupSize("tiny")
	def := DefaultWeights(tiny, "mlp", 16, "transformer", 0)
	again := DefaultWeights(tiny, "mlp", 16, "transformer", 0)
	other := DefaultWeights(tiny, "mlp", 16, "transformer", 1)
	pert := PerturbedWeights(tiny, "mlp", 16, "transformer", 0)
	if len(def) != len(Params(tiny, "mlp", 16, "transformer")) {
		t.Fatalf("DefaultWeights has %d tensors", len(def))
	}
	for name, x := range def {
		if x.DType != tensorfile.DTypeF32 || string(x.Data) != string(again[name].Data) {
			t.Errorf("%s: not reproducible F32", name)
		}
	}
	if string(def["embed"].Data) == string(other["embed"].Data) {
		t.Error("seeds 0 and 1 give the same embed")
	}
	inner := InitParams(InnerParams(tiny, "mlp", 16), 0, false)
	if string(inner["layers.0.ttt.W1"].Data) != string(def["layers.0.ttt.W1"].Data) {
		t.Error("inner-only W1 differs from the full model's")
	}

	tests := []struct {
		name           string
		w              map[string]tensorfile.Tensor
		lo, hi, minStd float64 // every value in [lo, hi]; spread at least minStd
	}{
		{"layers.0.ttt_norm", def, 1, 1, 0},
		{"layers.0.ttt.b1", def, 0, 0, 0},
		{"layers.0.ttt.tok_delta", def, 0, 0, 0},
		{"embed", def, -0.15, 0.15, 0.015},
		{"layers.0.ttt_norm", pert, 0.5, 1.5, 0.05},
		{"layers.1.ttt.ln_w", pert, 0.5, 1.5, 0.05},
		{"layers.0.ttt.post_norm_b", pert, -0.5, 0.5, 0.01},
		{"layers.0.ttt.tok_delta", pert, -0.5, 0.5, 0.01},
		{"layers.0.ttt.lr_b", pert, -0.5, 0.5, 0.01},
		{"layers.0.ttt.b2", pert, -0.2, 0.2, 0.005},
	}
	for _, tc := range tests {
		v := floats(t, tc.w[tc.name])
		mean, sq := 0.0, 0.0
		for _, x := range v {
			if x < tc.lo || x > tc.hi {
				t.Errorf("%s: value %g outside [%g, %g]", tc.name, x, tc.lo, tc.hi)
				break
			}
			mean += x
		}
		mean /= float64(len(v))
		for _, x := range v {
			sq += (x - mean) * (x - mean)
		}
		if std := sq / float64(len(v)); std < tc.minStd*tc.minStd {
			t.Errorf("%s: variance %g, want at least %g", tc.name, std, tc.minStd*tc.minStd)
		}
	}
}

func TestRandomInputs(t *testing.T) {
	tok := RandomTokens(3, 2, 32, 256)
	ids, err := tok.Int32s()
	if err != nil || !slices.Equal(tok.Shape, []int{2, 32}) {
		t.Fatalf("tokens %v %v", tok.Shape, err)
	}
	distinct := map[int32]bool{}
	for _, id := range ids {
		if id < 0 || id >= 256 {
			t.Fatalf("token %d outside [0, 256)", id)
		}
		distinct[id] = true
	}
	if len(distinct) < 32 {
		t.Errorf("only %d distinct tokens in 64", len(distinct))
	}
	if string(RandomTokens(3, 2, 32, 256).Data) != string(tok.Data) {
		t.Error("RandomTokens not reproducible")
	}

	in := RandomInnerInputs(0, 1, 2, 16, 8)
	for _, name := range []string{"xq", "xk", "xv"} {
		if !slices.Equal(in[name].Shape, []int{1, 2, 16, 8}) {
			t.Errorf("%s shape %v", name, in[name].Shape)
		}
	}
	if string(in["xq"].Data) == string(in["xk"].Data) {
		t.Error("xq equals xk")
	}
	for _, g := range floats(t, in["gate"]) {
		if g <= 0 || g >= 1 {
			t.Fatalf("gate %g outside (0, 1)", g)
		}
	}
}

func TestForwardFLOPs(t *testing.T) {
	tiny, _ := LookupSize("tiny")
	cfg := Config{TTTType: "linear", Batch: 1, SeqLen: 32, MiniBatch: 16}
	// One head, one mini-batch of the linear inner loop by hand: three
	// [16x16]x[16x16]-class products with f*f and three with K*K, all at 2*16^3.
	perToken := float64(6*16*16 + 6*16*16)
	inner := 32 * 4 * perToken
	cfg.InnerOnly = true
	if got := ForwardFLOPs(cfg, tiny); got != inner {
		t.Errorf("inner-only = %g, want %g", got, inner)
	}
	cfg.InnerOnly = false
	dense := 2*32*64*64*4 + 2*32*64*4 + 2*32*64*128*3
	want := 2*(float64(dense)+inner) + 2*32*64*256
	if got := ForwardFLOPs(cfg, tiny); got != want {
		t.Errorf("forward = %g, want %g", got, want)
	}
	cfg.TTTType = "mlp"
	if ForwardFLOPs(cfg, tiny) <= want {
		t.Error("mlp forward should cost more than linear")
	}
}
