package reference

import (
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// refForward is a plain float64 transcription of the spec's model: naive
// matmuls on the stored [in, out] weights, RoPE angles computed on the spot,
// causal convolutions summed tap by tap, and the primal per-token inner
// model.
func refForward(t *testing.T, w map[string]tensorfile.Tensor, s ttt.Size, tttType, backbone string, k int, tokens []int32, batch, seqLen int) []float64 {
	t.Helper()
	get := func(name string) []float64 {
		v, err := w[name].Float64s()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	C, nh, f := s.Hidden, s.Heads, s.HeadDim
	n := batch * seqLen
	mat := func(x, wt []float64, rows, in, out int) []float64 { // x [rows, in] @ w [in, out]
		y := make([]float64, rows*out)
		for r := 0; r < rows; r++ {
			for c := 0; c < out; c++ {
				for a := 0; a < in; a++ {
					y[r*out+c] += x[r*in+a] * wt[a*out+c]
				}
			}
		}
		return y
	}
	rms := func(x, wt []float64) []float64 {
		y := make([]float64, len(x))
		for r := 0; r < len(x)/C; r++ {
			var ss float64
			for c := 0; c < C; c++ {
				ss += x[r*C+c] * x[r*C+c]
			}
			for c := 0; c < C; c++ {
				y[r*C+c] = x[r*C+c] / math.Sqrt(ss/float64(C)+1e-6) * wt[c]
			}
		}
		return y
	}
	ropeAt := func(x []float64, p int) []float64 {
		y := make([]float64, f)
		for i := 0; i < f/2; i++ {
			a := float64(p) / math.Pow(10000, 2*float64(i)/float64(f))
			y[i] = x[i]*math.Cos(a) - x[i+f/2]*math.Sin(a)
			y[i+f/2] = x[i+f/2]*math.Cos(a) + x[i]*math.Sin(a)
		}
		return y
	}
	conv := func(x, cw, cb []float64) []float64 { // y[t,c] = b[c] + sum_k w[c,k] x[t-3+k, c], per sequence
		y := make([]float64, len(x))
		for b := 0; b < batch; b++ {
			for tt := 0; tt < seqLen; tt++ {
				for c := 0; c < C; c++ {
					v := cb[c]
					for j := 0; j < ttt.ConvWidth; j++ {
						if src := tt - (ttt.ConvWidth - 1) + j; src >= 0 {
							v += cw[c*ttt.ConvWidth+j] * x[(b*seqLen+src)*C+c]
						}
					}
					y[(b*seqLen+tt)*C+c] = v
				}
			}
		}
		return y
	}
	mamba := backbone == "mamba"
	embed := get("embed")
	h := make([]float64, n*C)
	for i, tok := range tokens {
		copy(h[i*C:], embed[int(tok)*C:(int(tok)+1)*C])
	}
	for l := 0; l < s.Layers; l++ {
		pre := fmt.Sprintf("layers.%d.", l)
		if mamba {
			for i, d := range conv(rms(h, get(pre+"conv_norm")), get(pre+"conv_w"), get(pre+"conv_b")) {
				h[i] += d
			}
		}
		x := rms(h, get(pre+"ttt_norm"))
		var q, kk []float64
		if mamba {
			qk := mat(x, get(pre+"ttt.wq"), n, C, C)
			q, kk = conv(qk, get(pre+"ttt.conv_q_w"), get(pre+"ttt.conv_q_b")), conv(qk, get(pre+"ttt.conv_k_w"), get(pre+"ttt.conv_k_b"))
		} else {
			q, kk = mat(x, get(pre+"ttt.wq"), n, C, C), mat(x, get(pre+"ttt.wk"), n, C, C)
		}
		v := mat(x, get(pre+"ttt.wv"), n, C, C)
		lrW, lrB := get(pre+"ttt.lr_w"), get(pre+"ttt.lr_b")
		inner, err := NewInner[float64](w, pre+"ttt.", nh, f, k, tttType == "mlp", ttt.BaseLR(tttType))
		if err != nil {
			t.Fatal(err)
		}
		o := make([]float64, n*C)
		for b := 0; b < batch; b++ {
			for hd := 0; hd < nh; hd++ {
				var hq, hk, hv, gate []float64
				for tt := 0; tt < seqLen; tt++ {
					r := b*seqLen + tt
					hq = append(hq, ropeAt(q[r*C+hd*f:r*C+hd*f+f], tt%k)...)
					hk = append(hk, ropeAt(kk[r*C+hd*f:r*C+hd*f+f], tt%k)...)
					hv = append(hv, v[r*C+hd*f:r*C+hd*f+f]...)
					z := lrB[hd]
					for c := 0; c < C; c++ {
						z += x[r*C+c] * lrW[hd*C+c]
					}
					gate = append(gate, 1/(1+math.Exp(-z)))
				}
				out := primalInner(inner, hd, hq, hk, hv, gate, seqLen)
				for tt := 0; tt < seqLen; tt++ {
					copy(o[(b*seqLen+tt)*C+hd*f:], out[tt*f:(tt+1)*f])
				}
			}
		}
		pw, pb := get(pre+"ttt.post_norm_w"), get(pre+"ttt.post_norm_b")
		for r := 0; r < n; r++ {
			copy(o[r*C:(r+1)*C], naiveLN(o[r*C:(r+1)*C], pw, pb))
		}
		if mamba {
			for i, xg := range mat(x, get(pre+"ttt.wg"), n, C, C) {
				o[i] *= 0.5 * xg * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(xg+0.044715*xg*xg*xg)))
			}
		}
		for i, d := range mat(o, get(pre+"ttt.wo"), n, C, C) {
			h[i] += d
		}
		x = rms(h, get(pre+"mlp_norm"))
		g, u := mat(x, get(pre+"mlp.w_gate"), n, C, s.MLP), mat(x, get(pre+"mlp.w_up"), n, C, s.MLP)
		for i := range g {
			g[i] = g[i] / (1 + math.Exp(-g[i])) * u[i]
		}
		for i, d := range mat(g, get(pre+"mlp.w_down"), n, s.MLP, C) {
			h[i] += d
		}
	}
	x := rms(h, get("final_norm"))
	logits := make([]float64, n*s.Vocab)
	for r := 0; r < n; r++ {
		for vv := 0; vv < s.Vocab; vv++ {
			for c := 0; c < C; c++ {
				logits[r*s.Vocab+vv] += x[r*C+c] * embed[vv*C+c]
			}
		}
	}
	return logits
}

// maxRelDiff is max|a-b| / max|b|.
func maxRelDiff[A, B Float](a []A, b []B) float64 {
	var d, m float64
	for i := range b {
		d = math.Max(d, math.Abs(float64(a[i])-float64(b[i])))
		m = math.Max(m, math.Abs(float64(b[i])))
	}
	return d / m
}

func tinyModel[T Float](t testing.TB, tttType string, k int) (*Model[T], map[string]tensorfile.Tensor) {
	return tinyModelOf[T](t, tttType, "transformer", k)
}

func tinyModelOf[T Float](t testing.TB, tttType, backbone string, k int) (*Model[T], map[string]tensorfile.Tensor) {
	t.Helper()
	s, _ := ttt.LookupSize("tiny")
	w := ttt.PerturbedWeights(s, tttType, k, backbone, 11)
	m, err := NewModel[T](s, tttType, backbone, k, w)
	if err != nil {
		t.Fatal(err)
	}
	return m, w
}

func tokensOf(t testing.TB, batch, seqLen int) []int32 {
	ids, err := ttt.RandomTokens(2, batch, seqLen, 256).Int32s()
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

func TestForwardMatchesReference(t *testing.T) {
	for _, tc := range []struct {
		tttType, backbone string
		batch, seqLen     int
		k                 int
	}{
		{"linear", "transformer", 2, 32, 16}, {"mlp", "transformer", 1, 32, 16}, {"linear", "transformer", 1, 24, 8},
		{"linear", "mamba", 2, 32, 16}, {"mlp", "mamba", 2, 16, 8},
	} {
		t.Run(fmt.Sprintf("%s/%s/B%d/L%d/K%d", tc.tttType, tc.backbone, tc.batch, tc.seqLen, tc.k), func(t *testing.T) {
			m, w := tinyModelOf[float64](t, tc.tttType, tc.backbone, tc.k)
			tokens := tokensOf(t, tc.batch, tc.seqLen)
			got, err := m.Forward(tokens, tc.batch, tc.seqLen)
			if err != nil {
				t.Fatal(err)
			}
			want := refForward(t, w, m.Size, tc.tttType, tc.backbone, tc.k, tokens, tc.batch, tc.seqLen)
			if d := maxRelDiff(got, want); d > 1e-12 {
				t.Errorf("logits differ from the reference by %g (relative)", d)
			}
		})
	}
}

func TestFloat32MatchesFloat64(t *testing.T) {
	for _, tc := range []struct{ tttType, backbone string }{
		{"linear", "transformer"}, {"mlp", "transformer"}, {"linear", "mamba"}, {"mlp", "mamba"},
	} {
		t.Run(tc.tttType+"/"+tc.backbone, func(t *testing.T) {
			m64, _ := tinyModelOf[float64](t, tc.tttType, tc.backbone, 16)
			m32, _ := tinyModelOf[float32](t, tc.tttType, tc.backbone, 16)
			tokens := tokensOf(t, 2, 64)
			want, err := m64.Forward(tokens, 2, 64)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m32.Forward(tokens, 2, 64)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxRelDiff(got, want); d > 1e-5 {
				t.Errorf("float32 logits differ from float64 by %g (relative)", d)
			}
		})
	}
}

func TestForwardDeterministic(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	m, _ := tinyModel[float32](t, "mlp", 16)
	tokens := tokensOf(t, 3, 48)
	var runs [][]float32
	for _, procs := range []int{1, 2, 3, 2} {
		runtime.GOMAXPROCS(procs)
		out, err := m.Forward(tokens, 3, 48)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, append([]float32(nil), out...))
	}
	for r := 1; r < len(runs); r++ {
		for i := range runs[0] {
			if math.Float32bits(runs[r][i]) != math.Float32bits(runs[0][i]) {
				t.Fatalf("run %d differs from run 0 at %d: %g vs %g", r, i, runs[r][i], runs[0][i])
			}
		}
	}
}

func TestForwardErrors(t *testing.T) {
	m, w := tinyModel[float64](t, "linear", 16)
	tests := []struct {
		name   string
		tokens []int32
		b, l   int
	}{
		{"count", make([]int32, 5), 1, 16},
		{"not a multiple of K", make([]int32, 20), 1, 20},
		{"token out of range", append(make([]int32, 15), 256), 1, 16},
	}
	for _, tc := range tests {
		if _, err := m.Forward(tc.tokens, tc.b, tc.l); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	delete(w, "layers.1.ttt.ln_b")
	if _, err := NewModel[float64](m.Size, "linear", "transformer", 16, w); err == nil {
		t.Error("NewModel without layers.1.ttt.ln_b: no error")
	}
	if _, err := NewModel[float64](m.Size, "linear", "mamba", 16, ttt.PerturbedWeights(m.Size, "linear", 16, "transformer", 1)); err == nil {
		t.Error("NewModel mamba from transformer weights: no error")
	}
	if _, err := NewModel[float64](m.Size, "linear", "rnn", 16, w); err == nil {
		t.Error("NewModel with backbone rnn: no error")
	}
}

func BenchmarkForwardTiny(b *testing.B) {
	for _, tttType := range []string{"linear", "mlp"} {
		b.Run(tttType+"/f32/B1/L256", func(b *testing.B) {
			m, _ := tinyModel[float32](b, tttType, 16)
			tokens := tokensOf(b, 1, 256)
			for b.Loop() {
				if _, err := m.Forward(tokens, 1, 256); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
