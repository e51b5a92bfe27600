package gpu

import "fmt"

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
	x                 devPtr // the input, act, row stride ldx
	ldx               int
	dyA, wA, dwA, dbA devPtr // output gradient (float32 [N, C]), weights, their gradients
	dyB, wB, dwB, dbB devPtr // a second convolution, or all zero
	dxf               devPtr // dx as float32 [N, C], or 0
	dxa               devPtr // dx as act, row stride lda, or 0
	lda               int
	part              devPtr // scratch of at least convBwdScratch(N, C) floats
	C, L, N           int
	R                 int // rows per block; 0 is convBwdTile(N)
}

// convBwdScratch is the floats of xb_conv_bwd's partial sums for two
// convolutions over N rows of C channels.
func convBwdScratch(N, C int) int {
	R := convBwdTile(N)
	return (N + R - 1) / R * 10 * C
}

func (a convBwd) enqueue(r *rt, fn map[string]uintptr) error {
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
	if err := r.launch("xb_conv_bwd", fn["xb_conv_bwd"], grid, [3]int{rowThreads, 1, 1}, 0, a.x, i32(a.ldx),
		a.dyA, a.wA, a.dyB, a.wB, a.dxf, a.dxa, i32(a.lda), a.part, i32(a.C), i32(a.L), i32(a.N), i32(R)); err != nil {
		return err
	}
	C4, C := i32(4*a.C), i32(a.C)
	if convs == 1 {
		return colsum(r, fn, a.part, 5*a.C, slots, a.dwA, C4, a.dbA, C, 0, 0, 0, 0)
	}
	return colsum(r, fn, a.part, 10*a.C, slots, a.dwA, C4, a.dbA, C, a.dwB, C4, a.dbB, C)
}

// colsum adds slots rows of part (stride floats apart) into up to four
// gradients, the columns split between them in order (xb_colsum).
func colsum(r *rt, fn map[string]uintptr, part devPtr, stride, slots int, d0 devPtr, n0 i32, d1 devPtr, n1 i32,
	d2 devPtr, n2 i32, d3 devPtr, n3 i32) error {
	n := int(n0 + n1 + n2 + n3)
	grid := [3]int{min((n+rowThreads-1)/rowThreads, 4*max(r.smCount, 1)), 1, 1}
	return r.launch("xb_colsum", fn["xb_colsum"], grid, [3]int{rowThreads, 1, 1}, 0, part, i64(int64(stride)), i32(slots),
		d0, n0, d1, n1, d2, n2, d3, n3)
}

// prepMambaBwd is RoPE's inverse, dv and the gate logits' gradient from the
// inner backward's outputs (xb_prep_mamba_bwd), then dlr_b (xb_colsum).
type prepMambaBwd struct {
	dq, dk, dv, dgate, gate, rope devPtr
	dxq, dxk                      devPtr // float32 [N, C]: xb_conv_bwd's dyA, dyB
	dP                            devPtr // act [N, ldp]
	ldp                           int
	dlrB                          devPtr
	part                          devPtr // scratch of prepBwdSlots(r, N) * nh floats
	L, nh, C, N                   int
}

// prepBwdSlots is xb_prep_mamba_bwd's grid: rows are walked block-strided,
// one dlr_b slot a block.
func prepBwdSlots(r *rt, N int) int { return min(N, 2*max(r.smCount, 1)) }

func (a prepMambaBwd) enqueue(r *rt, fn map[string]uintptr) error {
	if g := a.ldp - 3*a.C; g < a.nh || g > rowThreads {
		// thread h owns gate column 3C + h of every row
		return fmt.Errorf("gpu: xb_prep_mamba_bwd: %d gate columns for %d heads and %d threads", g, a.nh, rowThreads)
	}
	slots := prepBwdSlots(r, a.N)
	if err := r.launch("xb_prep_mamba_bwd", fn["xb_prep_mamba_bwd"], [3]int{slots, 1, 1}, [3]int{rowThreads, 1, 1}, 0,
		a.dq, a.dk, a.dv, a.dgate, a.gate, a.rope, a.dxq, a.dxk, a.dP, i32(a.ldp), a.part,
		i32(a.L), i32(a.nh), i32(a.N)); err != nil {
		return err
	}
	return colsum(r, fn, a.part, a.nh, slots, a.dlrB, i32(a.nh), 0, 0, 0, 0, 0, 0)
}

// gateBwd launches xb_gate_bwd over N rows: dy (float32 [N, C]) becomes
// dPn in place and dg (act, row stride ldg) the gate logits' gradient.
func gateBwd(r *rt, fn map[string]uintptr, o, postW, postB, g devPtr, ldg int, dy, dg devPtr, C, N int) error {
	return r.launch("xb_gate_bwd", fn["xb_gate_bwd"], [3]int{N, 1, 1}, [3]int{rowThreads, 1, 1}, 0,
		o, postW, postB, g, i32(ldg), dy, dg, i32(C))
}

// mambaBwdKernels are the functions kernels/mamba_bwd.cu adds to a program.
var mambaBwdKernels = []string{"xb_conv_bwd", "xb_colsum", "xb_prep_mamba_bwd", "xb_gate_bwd"}
