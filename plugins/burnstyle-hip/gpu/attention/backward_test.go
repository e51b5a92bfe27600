package attention_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/attention"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu/internal/emutest"
)

// refGrad is the backward's definition in float64 from refAttention's
// probabilities, per (batch, head) row: dp = dout v^T, ds = p (dp - dout.out),
// dq = scale ds k, dk += scale ds^T q, dv += p^T dout (dk, dv summed over
// the group's heads).
func refGrad(s attention.Spec, q, k, v, dout []float32) (dq, dk, dv []float64) {
	S, KV, D, g := s.SeqLen, s.KVLen, s.HeadDim, s.Heads/s.KVHeads
	out := refAttention(s, q, k, v)
	dq, dk, dv = make([]float64, len(q)), make([]float64, len(k)), make([]float64, len(k))
	scale := 1 / math.Sqrt(float64(D))
	p := make([]float64, KV)
	for bh := 0; bh < s.Batch*s.Heads; bh++ {
		kb := (bh/s.Heads*s.KVHeads + bh%s.Heads/g) * KV * D
		for i := 0; i < S; i++ {
			qo := (bh*S + i) * D
			n := KV
			if s.Causal {
				n = max(0, min(KV, i+KV-S+1))
			}
			m, l, di := math.Inf(-1), 0.0, 0.0
			for j := 0; j < n; j++ {
				var acc float64
				for t := 0; t < D; t++ {
					acc += float64(q[qo+t]) * float64(k[kb+j*D+t])
				}
				p[j] = acc * scale
				m = math.Max(m, p[j])
			}
			for j := 0; j < n; j++ {
				p[j] = math.Exp(p[j] - m)
				l += p[j]
			}
			for t := 0; t < D; t++ {
				di += float64(dout[qo+t]) * out[qo+t]
			}
			for j := 0; j < n; j++ {
				var dp float64
				for t := 0; t < D; t++ {
					dp += float64(dout[qo+t]) * float64(v[kb+j*D+t])
				}
				pj := p[j] / l
				ds := pj * (dp - di)
				for t := 0; t < D; t++ {
					dq[qo+t] += scale * ds * float64(k[kb+j*D+t])
					dk[kb+j*D+t] += scale * ds * float64(q[qo+t])
					dv[kb+j*D+t] += pj * float64(dout[qo+t])
				}
			}
		}
	}
	return dq, dk, dv
}

// refLSE is each row's saved state in float64: the log2-sum-exp2 of its
// visible scores in log2 units (ln(sum exp(q.k / sqrt(D))) / ln 2, what
// xa_lse computes), +inf for a row that sees no key.
func refLSE(s attention.Spec, q, k []float32) []float64 {
	S, KV, D, g := s.SeqLen, s.KVLen, s.HeadDim, s.Heads/s.KVHeads
	out := make([]float64, s.Batch*s.Heads*S)
	sc := make([]float64, KV)
	for bh := 0; bh < s.Batch*s.Heads; bh++ {
		kb := (bh/s.Heads*s.KVHeads + bh%s.Heads/g) * KV * D
		for i := 0; i < S; i++ {
			n := KV
			if s.Causal {
				n = max(0, min(KV, i+KV-S+1))
			}
			m, l := math.Inf(-1), 0.0
			for j := 0; j < n; j++ {
				var acc float64
				for t := 0; t < D; t++ {
					acc += float64(q[(bh*S+i)*D+t]) * float64(k[kb+j*D+t])
				}
				sc[j] = acc / math.Sqrt(float64(D))
				m = math.Max(m, sc[j])
			}
			for j := 0; j < n; j++ {
				l += math.Exp(sc[j] - m)
			}
			out[bh*S+i] = math.Inf(1)
			if n > 0 {
				out[bh*S+i] = (m + math.Log(l)) * math.Log2E
			}
		}
	}
	return out
}

// checkLSE compares the rows' lse the backward's forward saved with
// refLSE: within 2e-3 + 1e-4 |lse| (log2 units: float32 scores of inputs
// exact in the dtype), +inf exactly where a row sees no key, no row left
// unwritten (NaN).
func checkLSE(t *testing.T, s attention.Spec, got []float32, want []float64) {
	t.Helper()
	worst, bad := 0.0, 0
	for i, w := range want {
		g := float64(got[i])
		if math.IsInf(w, 1) || math.IsInf(g, 0) || math.IsNaN(g) {
			if !(math.IsInf(w, 1) && math.IsInf(g, 1)) {
				if bad++; bad <= 3 {
					t.Errorf("%s lse row %d: %v, want %v", s, i, g, w)
				}
			}
			continue
		}
		worst = math.Max(worst, math.Abs(g-w)/(2e-3+1e-4*math.Abs(w)))
	}
	t.Logf("%s lse: worst error %.3g of the tolerance", s, worst)
	if bad > 0 || !(worst <= 1) {
		t.Errorf("%s lse: worst error %.3g of the tolerance, %d rows wrong or unwritten", s, worst, bad)
	}
}

// gradTol: float32 is accumulation order (dq by atomics in any order); the
// 16-bit types round the gradients to the type and the forward's p.
var gradTol = map[string]float64{"float32": 5e-6, "bfloat16": 1e-2, "float16": 2e-3}

// checkGrad runs s's forward and backward on d once (attention.ExportGradLSE)
// and checks out, dq, dk, dv and the rows' saved lse against float64;
// returns the build that ran (the forward that saved the lse, then the
// backward), so a caller can state which kernels it checked.
func checkGrad(t *testing.T, d *gpu.Device, s attention.Spec) string {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(s.HeadDim), uint64(s.KVLen)))
	round := map[string]func(float32) float32{"float32": func(x float32) float32 { return x },
		"bfloat16": cpu.RoundBF16, "float16": cpu.RoundF16}[s.Dtype]
	fill := func(n int, span float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = round(span * (2*r.Float32() - 1))
		}
		return x
	}
	q, k, v, dout := fill(s.QLen(), 2), fill(s.KLen(), 2), fill(s.KLen(), 1), fill(s.QLen(), 1)
	out, dq, dk, dv, lse, build, err := attention.ExportGradLSE(d, s, q, k, v, dout)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	checkLSE(t, s, lse, refLSE(s, q, k))
	wq, wk, wv := refGrad(s, q, k, v, dout)
	for _, c := range []struct {
		name string
		got  []float32
		want []float64
	}{{"out", out, refAttention(s, q, k, v)}, {"dq", dq, wq}, {"dk", dk, wk}, {"dv", dv, wv}} {
		var num, den float64
		nan := 0
		for i, w := range c.want {
			if math.IsNaN(float64(c.got[i])) {
				nan++
				continue
			}
			num += (float64(c.got[i]) - w) * (float64(c.got[i]) - w)
			den += w * w
		}
		e := math.Sqrt(num / den)
		t.Logf("%s %s: rel L2 %.3g", s, c.name, e)
		if nan > 0 || !(e <= gradTol[s.Dtype]) {
			t.Errorf("%s %s: rel L2 %.3g (tol %g), %d NaN/unwritten", s, c.name, e, gradTol[s.Dtype], nan)
		}
	}
	return build
}

// TestEmuAttentionGrad: the backward kernels against float64 at odd sizes:
// the CUDA-core kernel (float32 after the CUDA-core forward; 16-bit with
// CUDACores, and past head dim 128) in each tile table entry (64x64 to
// D = 64, 32x32 to 128, 16x16 above), the mma.sync kernel (16-bit after the
// mma.sync forward) at head dims padded to 32 (16, 20) and at 96 and 128;
// causal and not, GQA 4/2 and 2/1, kv_len longer and shorter than seq_len
// (rows that see no key), several query and kv tiles.
func TestEmuAttentionGrad(t *testing.T) {
	d := emutest.Open(t)
	for _, causal := range []bool{false, true} {
		checkGrad(t, d, attnSpec(2, 4, 2, 37, 53, 16, causal, "float32"))
	}
	checkGrad(t, d, attnSpec(1, 2, 1, 53, 37, 16, true, "float32")) // 16 rows see no key
	cc := attnSpec(1, 2, 2, 45, 45, 96, true, "bfloat16")           // 32x32 tiles
	cc.CUDACores = true
	checkGrad(t, d, cc)
	checkGrad(t, d, attnSpec(1, 2, 1, 21, 19, 136, true, "bfloat16")) // past 128: CUDA cores, 16x16 tiles
	// mma.sync. Head dims the forward's tests also use, so no new program
	// is compiled for the emulator.
	// 64 keys a block (the fallback where a block cannot get 190 KB).
	for _, s := range []attention.Spec{
		attnSpec(1, 4, 2, 70, 70, 16, true, "bfloat16"),   // 2 query and 2 kv tiles
		attnSpec(1, 2, 1, 29, 41, 20, false, "float16"),   // D % 8 != 0, padded to 32
		attnSpec(1, 2, 2, 45, 45, 96, true, "bfloat16"),   // D = 96
		attnSpec(1, 2, 1, 83, 67, 16, true, "bfloat16"),   // 16 rows see no key, partial tiles
		attnSpec(1, 2, 1, 37, 53, 128, false, "bfloat16"), // the suites' head dim
	} {
		s.GradKeys = 64
		checkGrad(t, d, s)
	}

	// 128 keys a block: 2 kv tiles, rows with no key, GQA.
	for _, s := range []attention.Spec{attnSpec(1, 4, 2, 150, 150, 16, true, "bfloat16"), attnSpec(1, 2, 1, 200, 133, 128, true, "bfloat16")} {
		s.GradKeys = 128
		checkGrad(t, d, s)
	}
}

func TestEmuAttentionGradTiming(t *testing.T) {
	d := emutest.Open(t)
	s := attnSpec(1, 2, 1, 37, 37, 16, true, "bfloat16")
	for _, phase := range []string{"backward", "both"} {
		tm, err := attention.TimeGrad(context.Background(), d, s, phase, gpu.Calls{Warmup: 1, Repeats: 2}, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(tm.SamplesMs) != 2 || tm.CompileMs <= 0 || !strings.Contains(tm.Kernel, "forward xa_attention_mma") ||
			!strings.Contains(tm.Kernel, "backward xa_attention_bwd_mma (FlashAttention-2, tensor cores") || tm.PeakMemoryBytes <= 0 {
			t.Errorf("%s: %+v", phase, tm)
		}
	}
	s.GradKeys = 128
	if tm, err := attention.TimeGrad(context.Background(), d, s, "backward", gpu.Calls{Warmup: 0, Repeats: 1}, 7); err != nil ||
		!strings.Contains(tm.Kernel, "backward xa_attention_bwd_mma (FlashAttention-2, tensor cores, mma.sync m16n8k16, ldmatrix, dq by float32 atomics) 64x128 tiles") {
		t.Errorf("GradKeys 128: %+v, %v", tm, err)
	}
	s.CUDACores, s.GradKeys = true, 0
	if tm, err := attention.TimeGrad(context.Background(), d, s, "backward", gpu.Calls{Warmup: 0, Repeats: 1}, 7); err != nil ||
		!strings.Contains(tm.Kernel, "backward xa_attention_bwd (FlashAttention-2, CUDA cores") {
		t.Errorf("CUDACores: %+v, %v", tm, err)
	}
	parts, err := attention.TimeGradParts(context.Background(), d, s, 2, 7)
	if err != nil || len(parts) != 3 || parts[0].Kernel != "xa_attention_bwd_pre" || parts[1].Kernel != "xa_attention_bwd" ||
		parts[2].Kernel != "xa_attention_bwd_dq" || !(parts[1].Ms > 0) {
		t.Errorf("TimeGradParts: %+v, %v", parts, err)
	}
	if _, err := attention.TimeGrad(context.Background(), d, s, "forward", gpu.Calls{Warmup: 1, Repeats: 2}, 7); err == nil || !strings.Contains(err.Error(), `phase "forward"`) {
		t.Errorf("forward: err %v", err)
	}
	if _, _, _, _, err := attention.ExportGrad(context.Background(), d, s, make([]float32, 3), nil, nil, nil); err == nil || !strings.Contains(err.Error(), "have 3, 0, 0, 0") {
		t.Errorf("short q: %v", err)
	}
}
