package ttt

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// Test hooks for package gpu_test (compiled into tests only).

// MambaBwdIO is one run of the mamba backward kernels alone
// (kernels/mamba_bwd.cu), launched as the training step launches them, from
// a program of just those kernels. N = B*L rows, C = Heads*HeadDim, LDP the
// fused projection's row stride. Inputs the kernels read in the act type
// are rounded in place to what the device holds (bfloat16 runs), so a
// reference computed from them afterwards sees the same numbers.
type MambaBwdIO struct {
	BF16                            bool
	B, L, Heads, HeadDim, MiniBatch int
	TileRows                        int // xb_conv_bwd's rows per block; 0 picks as the training step does

	// The conv block: input XC [N, C] (act), output gradient DH [N, C], weights ConvW [C, 4].
	XC, DH, ConvW []float64
	// The shared Q/K convolutions: P [N, LDP] (act) holds XQK in columns
	// [0, C) and the gate logits in [C, 2C); DQ, DK, DV [B, nh, L, f] are
	// the inner backward's (rotated) outputs, Gate and DGate [B, nh, L].
	P, DQ, DK, DV, Gate, DGate, ConvQW, ConvKW []float64
	// The output gate: inner output O [N, C] (act), post_norm's PostW and
	// PostB [C], and DY [N, C], the gradient at the gated output.
	O, PostW, PostB, DY []float64

	// Outputs. DP [N, LDP] is the fused projection's gradient: dXQK in
	// columns [0, C), the gate logits' in [C, 2C), dv, dz, zero pad.
	DXC, DConvW, DConvB                          []float64
	DP, DConvQW, DConvQB, DConvKW, DConvKB, DLrB []float64
	DPn                                          []float64 // the gradient at post_norm's output
}

// MambaLDP is the fused projection's row stride for C and nh.
func MambaLDP(C, nh int) int { return (3*C + nh + 7) / 8 * 8 }

// mambaBwdProgram is prelude.cuh and mamba_bwd.cu with the defines they use.
func mambaBwdProgram(bf16 bool, f, kb int) (string, []string) {
	return gpu.Program(kernelFS, "mamba_bwd.cu"), []string{fmt.Sprintf("-DXB_BF16=%d", b2i(bf16)), fmt.Sprintf("-DXB_F=%d", f),
		fmt.Sprintf("-DXB_KB=%d", kb), "-DXB_EPS=1e-6f"}
}

// MambaBwdCompileReport compiles mamba_bwd.cu alone with NVRTC for arch.
func MambaBwdCompileReport(bf16 bool, f, kb int, arch string) (string, error) {
	src, defs := mambaBwdProgram(bf16, f, kb)
	return gpu.NVRTCReport(src, defs, arch)
}

// RunMambaBwd runs the kernels on io's inputs and fills its outputs.
func RunMambaBwd(d *gpu.Device, io *MambaBwdIO) error {
	nh, f := io.Heads, io.HeadDim
	N, C := io.B*io.L, nh*f
	ldp := MambaLDP(C, nh)
	act := func(v []float64) []byte { return encodeProbe(v, io.BF16) }
	flt := func(v []float64) []byte { return encodeProbe(v, false) }
	for _, v := range [][]float64{io.XC, io.P, io.O} {
		roundProbe(v, io.BF16)
	}
	for _, v := range [][]float64{io.DH, io.ConvW, io.DQ, io.DK, io.DV, io.Gate, io.DGate, io.ConvQW, io.ConvKW, io.PostW, io.PostB, io.DY} {
		roundProbe(v, false)
	}
	rope := make([]float64, 0, io.MiniBatch*f)
	for p := 0; p < io.MiniBatch; p++ {
		for i := 0; i < f/2; i++ {
			a := float64(p) * math.Pow(10000, -2*float64(i)/float64(f))
			rope = append(rope, float64(float32(math.Cos(a))), float64(float32(math.Sin(a))))
		}
	}
	abytes := 4
	if io.BF16 {
		abytes = 2
	}
	head := N * C
	scratch := max(convBwdScratch(N, C), 2*max(d.RT.SMCount, 1)*nh)
	if io.TileRows > 0 {
		scratch = max(scratch, (N+io.TileRows-1)/io.TileRows*10*C)
	}
	return d.W.Do(func() error {
		r := d.RT
		var ptrs []gpu.Ptr
		defer func() {
			for _, p := range ptrs {
				r.Free(p)
			}
		}()
		buf := func(data []byte, bytes int) (gpu.Ptr, error) {
			if data != nil {
				bytes = len(data)
			}
			p, err := r.Alloc(int64(max(bytes, 4)))
			if err != nil {
				return 0, err
			}
			ptrs = append(ptrs, p)
			if data != nil {
				return p, r.HtoD(p, data)
			}
			return p, r.Fill32(p, 0, int64(max(bytes, 4)/4))
		}
		var err error
		get := func(data []byte, bytes int) gpu.Ptr {
			if err != nil {
				return 0
			}
			var p gpu.Ptr
			p, err = buf(data, bytes)
			return p
		}
		xc, dh, convW := get(act(io.XC), 0), get(flt(io.DH), 0), get(flt(io.ConvW), 0)
		P, dq, dk, dv := get(act(io.P), 0), get(flt(io.DQ), 0), get(flt(io.DK), 0), get(flt(io.DV), 0)
		gate, dgate, qW, kW := get(flt(io.Gate), 0), get(flt(io.DGate), 0), get(flt(io.ConvQW), 0), get(flt(io.ConvKW), 0)
		o, postW, postB, dy := get(act(io.O), 0), get(flt(io.PostW), 0), get(flt(io.PostB), 0), get(flt(io.DY), 0)
		ropeP := get(flt(rope), 0)
		dxc, dxq, dxk := get(nil, 4*head), get(nil, 4*head), get(nil, 4*head)
		dP := get(nil, abytes*N*ldp)
		g := make([]gpu.Ptr, 7) // dconv_w, dconv_b, dconv_q_w, dconv_q_b, dconv_k_w, dconv_k_b, dlr_b
		for i, n := range []int{4 * C, C, 4 * C, C, 4 * C, C, nh} {
			g[i] = get(nil, 4*n)
		}
		part := get(nil, 4*scratch)
		if err != nil {
			return err
		}
		// NaN in every column of dP, so one the kernels leave unwritten shows.
		if err := r.Fill32(dP, 0x7fc07fc0, int64(abytes*N*ldp/4)); err != nil {
			return err
		}
		mod, _, err := r.Module(mambaBwdProgram(io.BF16, f, io.MiniBatch))
		if err != nil {
			return err
		}
		defer r.Drv.ModuleUnload(mod)
		fn := map[string]uintptr{}
		for _, name := range mambaBwdKernels {
			if fn[name], err = r.Function(mod, name); err != nil {
				return err
			}
		}
		steps := []func() error{
			func() error { // the conv block: one convolution, dx in float32
				return convBwd{x: xc, ldx: C, dyA: dh, wA: convW, dwA: g[0], dbA: g[1], dxf: dxc, part: part,
					C: C, L: io.L, N: N, R: io.TileRows}.enqueue(r, fn)
			},
			func() error {
				return gateBwd(r, fn, o, postW, postB, P.Off(C, int64(abytes)), ldp, dy, dP.Off(C, int64(abytes)), C, N)
			},
			func() error {
				return prepMambaBwd{dq: dq, dk: dk, dv: dv, dgate: dgate, gate: gate, rope: ropeP, dxq: dxq, dxk: dxk,
					dP: dP, ldp: ldp, dlrB: g[6], part: part, L: io.L, nh: nh, C: C, N: N}.enqueue(r, fn)
			},
			func() error { // ConvQ and ConvK: two convolutions, dx in act into dP
				return convBwd{x: P, ldx: ldp, dyA: dxq, wA: qW, dwA: g[2], dbA: g[3], dyB: dxk, wB: kW, dwB: g[4], dbB: g[5],
					dxa: dP, lda: ldp, part: part, C: C, L: io.L, N: N, R: io.TileRows}.enqueue(r, fn)
			},
		}
		for _, s := range steps {
			if err := s(); err != nil {
				return err
			}
		}
		if err := r.Sync(); err != nil {
			return err
		}
		read := func(p gpu.Ptr, n int, isAct bool) []float64 {
			if err != nil {
				return nil
			}
			b := 4
			if isAct && io.BF16 {
				b = 2
			}
			raw := make([]byte, n*b)
			if err = r.DtoH(raw, p); err != nil {
				return nil
			}
			return decodeProbe(raw, b == 2)
		}
		io.DXC, io.DConvW, io.DConvB = read(dxc, head, false), read(g[0], 4*C, false), read(g[1], C, false)
		io.DP = read(dP, N*ldp, true)
		io.DConvQW, io.DConvQB, io.DConvKW, io.DConvKB = read(g[2], 4*C, false), read(g[3], C, false), read(g[4], 4*C, false), read(g[5], C, false)
		io.DLrB, io.DPn = read(g[6], nh, false), read(dy, head, false)
		return err
	})
}

func roundProbe(v []float64, bf16 bool) {
	for i, x := range v {
		if bf16 {
			v[i] = float64(gpu.FromBF16(gpu.ToBF16(float32(x))))
		} else {
			v[i] = float64(float32(x))
		}
	}
}

func encodeProbe(v []float64, bf16 bool) []byte {
	if bf16 {
		b := make([]byte, 2*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint16(b[2*i:], gpu.ToBF16(float32(x)))
		}
		return b
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
	}
	return b
}

func decodeProbe(raw []byte, bf16 bool) []float64 {
	if bf16 {
		out := make([]float64, len(raw)/2)
		for i := range out {
			out[i] = float64(gpu.FromBF16(binary.LittleEndian.Uint16(raw[2*i:])))
		}
		return out
	}
	out := make([]float64, len(raw)/4)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	}
	return out
}
