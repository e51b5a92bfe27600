package ttt_test

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"
)

// The mamba backward kernels alone on the emulator (gputtt.RunMambaBwd launches
// them as the training step does) against a float64 transcription of
// docs/ttt-backward.md, "The mamba backbone": the conv block's convolution,
// RoPE's inverse then ConvQ^T + ConvK^T on the shared projection (with dv,
// the gate logits' dz and dlr_b around them), and the output gate. tiny in
// both dtypes, and f = 64, C = 768 (three column blocks, several channels a
// thread in the row kernels); row blocks that cross a sequence's end (12
// rows over L = 32) and a short last block (5 over 16) check the
// convolution's window resets and its partial sums' second pass.
func TestEmuMambaBackwardKernels(t *testing.T) {
	d := openEmu(t)
	cases := []struct {
		name              string
		bf16              bool
		B, L, nh, f, K, R int
	}{
		{"tiny float32", false, 2, 32, 4, 16, 16, 0},
		{"tiny bfloat16, blocks across sequences", true, 2, 32, 4, 16, 8, 12},
		{"f=64 float32, short last block", false, 1, 16, 12, 64, 16, 5},
	}
	for i, c := range cases {
		io := randomMambaBwd(uint64(i+1), c.bf16, c.B, c.L, c.nh, c.f, c.K, c.R)
		if err := gputtt.RunMambaBwd(d, io); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ref := mambaBwdRef(io)
		actTol := 1e-5 // outputs stored in the act type: dXQK, the gate logits', dv, dz
		if c.bf16 {
			actTol = 5e-3 // bfloat16 rounding of each element, ~2^-9 at worst
		}
		for _, o := range []struct {
			name      string
			got, want []float64
			tol       float64
		}{
			{"dx (conv block)", io.DXC, ref.DXC, 1e-5}, {"conv_w", io.DConvW, ref.DConvW, 1e-5},
			{"conv_b", io.DConvB, ref.DConvB, 1e-5}, {"dP", io.DP, ref.DP, actTol},
			{"conv_q_w", io.DConvQW, ref.DConvQW, 1e-5}, {"conv_q_b", io.DConvQB, ref.DConvQB, 1e-5},
			{"conv_k_w", io.DConvKW, ref.DConvKW, 1e-5}, {"conv_k_b", io.DConvKB, ref.DConvKB, 1e-5},
			{"lr_b", io.DLrB, ref.DLrB, 1e-5}, {"dPn", io.DPn, ref.DPn, 1e-5},
		} {
			e, bad := mambaRelL2(o.got, o.want)
			t.Logf("%s: %-16s rel L2 %.3g", c.name, o.name, e)
			if bad > 0 || !(e <= o.tol) {
				t.Errorf("%s: %s rel L2 %.3g (tol %g), %d NaN or missing", c.name, o.name, e, o.tol, bad)
			}
		}
	}
}

// TestMambaBackwardNVRTC compiles mamba_bwd.cu with the real NVRTC for
// sm_90 (XBENCH_LIBNVRTC) in both dtypes at f = 64 and fails on a compile
// error or a register spill in any of its kernels.
func TestMambaBackwardNVRTC(t *testing.T) {
	if os.Getenv("XBENCH_LIBNVRTC") == "" {
		t.Skip("set XBENCH_LIBNVRTC to a libnvrtc.so to compile the kernels for sm_90")
	}
	// real NVRTC compiles only: safe beside each other, after the serial emulator tests
	t.Parallel()
	for _, bf16 := range []bool{false, true} {
		log, err := gputtt.MambaBwdCompileReport(bf16, 64, 16, "sm_90")
		if err != nil {
			t.Fatalf("bf16=%v: %v\n%s", bf16, err, log)
		}
		t.Logf("bf16=%v:\n%s", bf16, log)
		seen := map[string]bool{}
		fn := ""
		for _, line := range strings.Split(log, "\n") {
			if _, name, ok := strings.Cut(line, "Function properties for "); ok {
				fn = strings.TrimSpace(name)
			}
			if strings.Contains(line, "bytes spill") && fn != "" {
				seen[fn] = true
				if !strings.Contains(line, " 0 bytes spill stores, 0 bytes spill loads") {
					t.Errorf("bf16=%v: %s spills registers: %s", bf16, fn, line)
				}
			}
		}
		for _, k := range []string{"xb_conv_bwd", "xb_colsum", "xb_prep_mamba_bwd", "xb_gate_bwd"} {
			if !seen[k] {
				t.Errorf("bf16=%v: no ptxas report for %s:\n%s", bf16, k, log)
			}
		}
	}
}

func randomMambaBwd(seed uint64, bf16 bool, B, L, nh, f, K, R int) *gputtt.MambaBwdIO {
	r := rand.New(rand.NewPCG(seed, 99))
	N, C := B*L, nh*f
	ldp := gputtt.MambaLDP(C, nh)
	vec := func(n int, mean, sd float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = mean + sd*r.NormFloat64()
		}
		return v
	}
	gate := make([]float64, B*nh*L)
	for i := range gate {
		gate[i] = 1 / (1 + math.Exp(-r.NormFloat64()))
	}
	return &gputtt.MambaBwdIO{BF16: bf16, B: B, L: L, Heads: nh, HeadDim: f, MiniBatch: K, TileRows: R,
		XC: vec(N*C, 0, 1), DH: vec(N*C, 0, 0.1), ConvW: vec(4*C, 0, 0.5),
		P: vec(N*ldp, 0, 1), DQ: vec(N*C, 0, 0.1), DK: vec(N*C, 0, 0.1), DV: vec(N*C, 0, 0.1),
		Gate: gate, DGate: vec(B*nh*L, 0, 0.1), ConvQW: vec(4*C, 0, 0.5), ConvKW: vec(4*C, 0, 0.5),
		O: vec(N*C, 0.2, 1), PostW: vec(C, 1, 0.1), PostB: vec(C, 0, 0.1), DY: vec(N*C, 0, 0.1)}
}

// convBwdRef is the causal depthwise convolution's backward in float64:
// x's rows at stride ldx, dy [N, C], w [C, 4]; returns dx [N, C], dw, db.
func convBwdRef(x []float64, ldx int, dy, w []float64, N, L, C int) (dx, dw, db []float64) {
	dx, dw, db = make([]float64, N*C), make([]float64, 4*C), make([]float64, C)
	for n := 0; n < N; n++ {
		t := n % L
		for c := 0; c < C; c++ {
			g := dy[n*C+c]
			db[c] += g
			for k := 0; k < 4; k++ {
				if s := t - 3 + k; s >= 0 {
					dw[c*4+k] += g * x[(n-3+k)*ldx+c]
				}
				if s := t + 3 - k; s < L {
					dx[n*C+c] += dy[(n+3-k)*C+c] * w[c*4+k]
				}
			}
		}
	}
	return dx, dw, db
}

func geluRef(x float64) (y, d float64) {
	c := math.Sqrt(2 / math.Pi)
	u := c * (x + 0.044715*x*x*x)
	th := math.Tanh(u)
	return 0.5 * x * (1 + th), 0.5*(1+th) + 0.5*x*(1-th*th)*c*(1+3*0.044715*x*x)
}

func mambaBwdRef(io *gputtt.MambaBwdIO) *gputtt.MambaBwdIO {
	nh, f, L, K := io.Heads, io.HeadDim, io.L, io.MiniBatch
	N, C, half := io.B*io.L, nh*f, f/2
	ldp := gputtt.MambaLDP(C, nh)
	ref := &gputtt.MambaBwdIO{DP: make([]float64, N*ldp), DLrB: make([]float64, nh), DPn: make([]float64, N*C)}
	ref.DXC, ref.DConvW, ref.DConvB = convBwdRef(io.XC, C, io.DH, io.ConvW, N, L, C)
	// RoPE's inverse (spec position t mod K), dv and dz.
	dxq, dxk := make([]float64, N*C), make([]float64, N*C)
	for n := 0; n < N; n++ {
		b, t := n/L, n%L
		for h := 0; h < nh; h++ {
			o := ((b*nh+h)*L + t) * f
			for i := 0; i < half; i++ {
				a := float64(t%K) * math.Pow(10000, -2*float64(i)/float64(f))
				cs, sn := math.Cos(a), math.Sin(a)
				c0, c1 := n*C+h*f+i, n*C+h*f+i+half
				dxq[c0] = io.DQ[o+i]*cs + io.DQ[o+i+half]*sn
				dxq[c1] = io.DQ[o+i+half]*cs - io.DQ[o+i]*sn
				dxk[c0] = io.DK[o+i]*cs + io.DK[o+i+half]*sn
				dxk[c1] = io.DK[o+i+half]*cs - io.DK[o+i]*sn
			}
			for i := 0; i < f; i++ {
				ref.DP[n*ldp+2*C+h*f+i] = io.DV[o+i]
			}
			g := io.Gate[(b*nh+h)*L+t]
			z := io.DGate[(b*nh+h)*L+t] * g * (1 - g)
			ref.DP[n*ldp+3*C+h] = z
			ref.DLrB[h] += z
		}
	}
	dq, dwq, dbq := convBwdRef(io.P, ldp, dxq, io.ConvQW, N, L, C)
	dk, dwk, dbk := convBwdRef(io.P, ldp, dxk, io.ConvKW, N, L, C)
	ref.DConvQW, ref.DConvQB, ref.DConvKW, ref.DConvKB = dwq, dbq, dwk, dbk
	for n := 0; n < N; n++ {
		for c := 0; c < C; c++ {
			ref.DP[n*ldp+c] = dq[n*C+c] + dk[n*C+c]
		}
	}
	// The gate: Pn = LayerNorm(o), dPn = dy geluRef(g), dg = dy Pn gelu'(g).
	for n := 0; n < N; n++ {
		row := io.O[n*C : (n+1)*C]
		var mu, v float64
		for _, x := range row {
			mu += x
		}
		mu /= float64(C)
		for _, x := range row {
			v += (x - mu) * (x - mu)
		}
		rs := 1 / math.Sqrt(v/float64(C)+1e-6)
		for c := 0; c < C; c++ {
			pn := (row[c]-mu)*rs*io.PostW[c] + io.PostB[c]
			ge, gd := geluRef(io.P[n*ldp+C+c])
			dy := io.DY[n*C+c]
			ref.DPn[n*C+c] = dy * ge
			ref.DP[n*ldp+C+c] = dy * pn * gd
		}
	}
	return ref
}

// mambaRelL2 is |got - want| / |want| and the count of NaN or missing entries.
func mambaRelL2(got, want []float64) (float64, int) {
	if len(got) != len(want) {
		return math.Inf(1), len(want)
	}
	var num, den float64
	bad := 0
	for i := range want {
		if math.IsNaN(got[i]) {
			bad++
			continue
		}
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	return math.Sqrt(num / den), bad
}
