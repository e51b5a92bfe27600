package ttt

import (
	"fmt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// The mamba backbone's backward on the GPU path (docs/ttt-backward.md, "The
// mamba backbone"; kernels/mamba_bwd.cu). Per layer, in the order the
// training step's backward meets them:
//
//	do = dout Wo^T                          (cuBLAS, as the transformer's)
//	xb_gate_bwd:       do -> dPn (in place), dP[:, C:2C) = do Pn gelu'(g)
//	xb_layernorm_bwd:  dPn -> dO            (post_norm, as the transformer's)
//	inner backward:    dO -> dq, dk, dv, dgate
//	xb_prep_mamba_bwd: RoPE^-1 -> dxq, dxk; dP[:, 2C:) = dv, dz; dlr_b slots
//	xb_conv_bwd:       dP[:, 0:C) = ConvQ^T(dxq) + ConvK^T(dxk); dconv_q/k slots
//	xb_colsum:         the slots into dconv_q_w/b, dconv_k_w/b and dlr_b
//	dX = dP Wqkvg^T, dWqkvg = X^T dP        (cuBLAS; wg's gradient is block 2)
//	...
//	xb_conv_bwd:       the conv block, dh -> dx (float32); dconv_w/b slots
//	xb_rmsnorm_bwd:    dx -> dh += ...      (conv_norm, shared with the transformer's norms)
//
// The launches are functions of the runtime and the compiled functions
// rather than Model methods, so the kernels' own test can run them from a
// program of just these kernels.

// convBwdMaxSlots bounds xb_conv_bwd's row blocks, so its partial-sum
// scratch and xb_colsum's serial sum over slots stay short.
const convBwdMaxSlots = 256

// convBwdTile is xb_conv_bwd's rows per block for N rows: at least 8, since
// a block reads the 3 rows past each end of its range on top of its own.
func convBwdTile(N int) int { return max(8, (N+convBwdMaxSlots-1)/convBwdMaxSlots) }

// convBwd is the backward of one causal convolution, or of two on the same
// input (ConvQ and ConvK on XQK): xb_conv_bwd then xb_colsum.
type convBwd struct {
	x                 gpu.Ptr // the input, act, row stride ldx
	ldx               int
	dyA, wA, dwA, dbA gpu.Ptr // output gradient (float32 [N, C]), weights, their gradients
	dyB, wB, dwB, dbB gpu.Ptr // a second convolution, or all zero
	dxf               gpu.Ptr // dx as float32 [N, C], or 0
	dxa               gpu.Ptr // dx as act, row stride lda, or 0
	lda               int
	part              gpu.Ptr // scratch of at least convBwdScratch(N, C) floats
	C, L, N           int
	R                 int // rows per block; 0 is convBwdTile(N)
}

// convBwdScratch is the floats of xb_conv_bwd's partial sums for two
// convolutions over N rows of C channels.
func convBwdScratch(N, C int) int {
	R := convBwdTile(N)
	return (N + R - 1) / R * 10 * C
}

func (a convBwd) enqueue(r *gpu.Runtime, fn map[string]uintptr) error {
	R := a.R
	if R <= 0 {
		R = convBwdTile(a.N)
	}
	convs := 1
	if a.dyB != 0 {
		convs = 2
	}
	slots := (a.N + R - 1) / R
	grid := [3]int{slots, (a.C + rowThreads - 1) / rowThreads, 1}
	if err := r.Launch("xb_conv_bwd", fn["xb_conv_bwd"], grid, [3]int{rowThreads, 1, 1}, 0, a.x, gpu.I32(a.ldx),
		a.dyA, a.wA, a.dyB, a.wB, a.dxf, a.dxa, gpu.I32(a.lda), a.part, gpu.I32(a.C), gpu.I32(a.L), gpu.I32(a.N), gpu.I32(R)); err != nil {
		return err
	}
	C4, C := gpu.I32(4*a.C), gpu.I32(a.C)
	if convs == 1 {
		return colsum(r, fn, a.part, 5*a.C, slots, a.dwA, C4, a.dbA, C, 0, 0, 0, 0)
	}
	return colsum(r, fn, a.part, 10*a.C, slots, a.dwA, C4, a.dbA, C, a.dwB, C4, a.dbB, C)
}

// colsum adds slots rows of part (stride floats apart) into up to four
// gradients, the columns split between them in order (xb_colsum).
func colsum(r *gpu.Runtime, fn map[string]uintptr, part gpu.Ptr, stride, slots int, d0 gpu.Ptr, n0 gpu.I32, d1 gpu.Ptr, n1 gpu.I32,
	d2 gpu.Ptr, n2 gpu.I32, d3 gpu.Ptr, n3 gpu.I32) error {
	n := int(n0 + n1 + n2 + n3)
	grid := [3]int{min((n+rowThreads-1)/rowThreads, 4*max(r.SMCount, 1)), 1, 1}
	return r.Launch("xb_colsum", fn["xb_colsum"], grid, [3]int{rowThreads, 1, 1}, 0, part, gpu.I64(int64(stride)), gpu.I32(slots),
		d0, n0, d1, n1, d2, n2, d3, n3)
}

// prepMambaBwd is RoPE's inverse, dv and the gate logits' gradient from the
// inner backward's outputs (xb_prep_mamba_bwd), then dlr_b (xb_colsum).
type prepMambaBwd struct {
	dq, dk, dv, dgate, gate, rope gpu.Ptr
	dxq, dxk                      gpu.Ptr // float32 [N, C]: xb_conv_bwd's dyA, dyB
	dP                            gpu.Ptr // act [N, ldp]
	ldp                           int
	dlrB                          gpu.Ptr
	part                          gpu.Ptr // scratch of prepBwdSlots(r, N) * nh floats
	L, nh, C, N                   int
}

// prepBwdSlots is xb_prep_mamba_bwd's grid: rows are walked block-strided,
// one dlr_b slot a block.
func prepBwdSlots(r *gpu.Runtime, N int) int { return min(N, 2*max(r.SMCount, 1)) }

func (a prepMambaBwd) enqueue(r *gpu.Runtime, fn map[string]uintptr) error {
	if g := a.ldp - 3*a.C; g < a.nh || g > rowThreads {
		// thread h owns gate column 3C + h of every row
		return fmt.Errorf("gpu: xb_prep_mamba_bwd: %d gate columns for %d heads and %d threads", g, a.nh, rowThreads)
	}
	slots := prepBwdSlots(r, a.N)
	if err := r.Launch("xb_prep_mamba_bwd", fn["xb_prep_mamba_bwd"], [3]int{slots, 1, 1}, [3]int{rowThreads, 1, 1}, 0,
		a.dq, a.dk, a.dv, a.dgate, a.gate, a.rope, a.dxq, a.dxk, a.dP, gpu.I32(a.ldp), a.part,
		gpu.I32(a.L), gpu.I32(a.nh), gpu.I32(a.N)); err != nil {
		return err
	}
	return colsum(r, fn, a.part, a.nh, slots, a.dlrB, gpu.I32(a.nh), 0, 0, 0, 0, 0, 0)
}

// gateBwd launches xb_gate_bwd over N rows: dy (float32 [N, C]) becomes
// dPn in place and dg (act, row stride ldg) the gate logits' gradient.
func gateBwd(r *gpu.Runtime, fn map[string]uintptr, o, postW, postB, g gpu.Ptr, ldg int, dy, dg gpu.Ptr, C, N int) error {
	return r.Launch("xb_gate_bwd", fn["xb_gate_bwd"], [3]int{N, 1, 1}, [3]int{rowThreads, 1, 1}, 0,
		o, postW, postB, g, gpu.I32(ldg), dy, dg, gpu.I32(C))
}

// mambaBwdKernels are the functions kernels/mamba_bwd.cu adds to a program.
var mambaBwdKernels = []string{"xb_conv_bwd", "xb_colsum", "xb_prep_mamba_bwd", "xb_gate_bwd"}
