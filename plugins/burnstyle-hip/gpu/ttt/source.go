package ttt

import (
	"embed"
	"fmt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

//go:embed kernels/*.cuh kernels/*.cu
var kernelFS embed.FS

// geometry is everything a compiled program is specialised for. The inner
// kernels take F, KB and the thread count as compile-time constants so their
// loops unroll and per-thread arrays stay in registers.
type geometry struct {
	F, KB, NT int
	MLP, BF16 bool
	BaseLR    float64
	// Variant picks the linear kernel: 2 (default) is inner_linear2.cu, lane
	// groups owning rows; 1 is inner_linear.cu, phase per barrier. mlp has one.
	Variant int
	// OnePass takes row mean and mean square in one reduction (variant 2).
	OnePass bool
	// Unroll is the unroll depth of variant 2's product loop (0: 2).
	Unroll int
	// CS is variant 3's cluster size: CTAs per (batch, head), each owning
	// F/CS columns of W1 (inner_linear_cl.cu). 1 runs it without clusters.
	CS int
	// CLX is variant 3's cross-CTA exchange (inner_cluster.cuh): 1 two
	// barrier.cluster rounds a step, 2 one round, 3 one point-to-point
	// exchange (st.async onto the receiver's mbarrier); 0 is the default.
	CLX int
	// Train adds the training step's kernels (train_geometry.go); NTB is
	// the inner backward kernel's block size.
	Train bool
	NTB   int
	// BwdCL runs the linear inner backward on the forward's cluster
	// (inner_linear_bwd_cl.cu, NTB = KB*F/CS) instead of one block per head.
	BwdCL bool
}

// cl says whether the variant-3 (cluster) linear kernel runs.
func (g geometry) cl() bool { return !g.MLP && g.Variant == 3 }

// clusterSize is the CTAs per (batch, head) of the inner launch.
func (g geometry) clusterSize() int {
	if g.cl() && g.CS > 1 {
		return g.CS
	}
	return 1
}

// defaultExchange is variant 3's exchange when Options leave it open: one
// st.async exchange a step (H100, 125m inner-only float32 at 4 CTAs: 0.2795
// ms against 0.3406 for one cluster barrier a step and 0.4067 for two;
// results/h100-exchange).
const defaultExchange = 3

// exchange is XB_CLX, the cluster kernel's exchange (1 to 3); without a
// cluster there is no one to signal, and 3 runs as 2.
func (g geometry) exchange() int {
	x := g.CLX
	if x <= 0 {
		x = defaultExchange
	}
	if x == 3 && g.clusterSize() == 1 {
		return 2
	}
	return x
}

// lanes is XB_LG, the lanes of one row group in the variant-2 kernel: f/2
// (two columns a lane) up to a warp; f = 96 keeps 32 lanes of 3 columns.
func (g geometry) lanes() int {
	if h := g.F / 2; h <= 32 && h&(h-1) == 0 && h > 0 {
		return h
	}
	return 32
}

// v2 says whether the variant-2 linear kernel runs.
func (g geometry) v2() bool { return !g.MLP && g.Variant != 1 && g.Variant != 3 }

// hidden is the inner model's width: F for linear, 4F for mlp.
func (g geometry) hidden() int {
	if g.MLP {
		return 4 * g.F
	}
	return g.F
}

// source is the one program text: prelude, dense kernels (the mamba
// backbone's with them), the portable GEMM and the inner kernel of the
// model's type.
func (g geometry) source() string {
	files := []string{"dense.cu", "mamba.cu", "gemm.cu", "inner_common.cuh", "inner_linear.cu"}
	switch {
	case g.MLP:
		files[4] = "inner_mlp.cu"
	case g.v2():
		files[4] = "inner_linear2.cu"
	case g.cl():
		files = append(files[:4], "inner_cluster.cuh", "inner_linear_cl.cu")
	}
	return gpu.Program(kernelFS, append(files, g.trainFiles()...)...)
}

func (g geometry) defines() []string {
	bf := 0
	if g.BF16 {
		bf = 1
	}
	unroll := g.Unroll
	if unroll <= 0 {
		unroll = 2
	}
	return append([]string{
		fmt.Sprintf("-DXB_BF16=%d", bf), fmt.Sprintf("-DXB_F=%d", g.F), fmt.Sprintf("-DXB_KB=%d", g.KB),
		fmt.Sprintf("-DXB_NT=%d", g.NT), fmt.Sprintf("-DXB_BASE_LR=%.17g", g.BaseLR), "-DXB_EPS=1e-6f",
		fmt.Sprintf("-DXB_LG=%d", g.lanes()), fmt.Sprintf("-DXB_ONEPASS=%d", b2i(g.OnePass)),
		fmt.Sprintf("-DXB_UNROLL=%d", unroll), fmt.Sprintf("-DXB_CS=%d", g.clusterSize()),
		fmt.Sprintf("-DXB_ROWNT=%d", rowThreads), fmt.Sprintf("-DXB_CLX=%d", g.exchange()),
	}, g.trainDefines()...)
}

func (g geometry) innerName() string {
	switch {
	case g.MLP:
		return "xb_inner_mlp"
	case g.v2():
		return "xb_inner_linear2"
	case g.cl():
		return "xb_inner_linear_cl"
	}
	return "xb_inner_linear"
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func r4(x int) int { return (x + 3) / 4 * 4 }

// smemBytes mirrors LIN_SMEM_FLOATS / MLP_SMEM_FLOATS of the kernel sources;
// the emulator test fails if the two ever disagree.
func (g geometry) smemBytes() int {
	F, KB := g.F, g.KB
	SF, SKT := F+4, KB+4
	if g.cl() {
		cs := g.clusterSize()
		fc := F / cs
		x := cs*KB*4 + cs*KB*2 // CL_XFLOATS: one slot per exchange round
		if g.exchange() > 1 {
			x = 4 + 2*cs*KB*8 // two mbarriers, double-buffered slots of 8 sums a row
		}
		return 4 * (fc*(F+4) + r4(fc) + 2*(2*KB*SF+r4(KB)) + KB*fc + r4(KB*KB) + r4(KB) + x)
	}
	if !g.MLP {
		stage := 3*KB*SF + F*SKT + r4(KB)
		tiles := 4 // Z, QW, G, Zbar
		if g.v2() {
			tiles = 1 // G only: the rest stays in registers
		}
		return 4 * (F*F + r4(F) + 2*stage + tiles*KB*SF + r4(KB*KB) + 2*r4(KB))
	}
	H := 4 * F
	SH, SW2 := H+4, F+1
	return 4 * (F*H + r4(H*SW2) + r4(H) + r4(F) + 2*KB*SF + 2*KB*SF + F*SKT + r4(KB) +
		3*KB*SH + 2*KB*SF + F*SKT + 2*r4(KB*KB) + 2*r4(KB))
}

// check states the kernels' shape assumptions, so an unsupported shape is an
// error before anything is compiled rather than a wrong answer after.
func (g geometry) check() error {
	F, KB, NT, H := g.F, g.KB, g.NT, g.hidden()
	if g.cl() {
		cs := g.clusterSize()
		fc := F / max(cs, 1)
		switch {
		case cs < 1 || cs > 8 || F%cs != 0:
			return fmt.Errorf("cluster of %d CTAs cannot split head dim %d (1 to 8, dividing it)", cs, F)
		case fc > 32 || fc&(fc-1) != 0 || fc < cs:
			return fmt.Errorf("head dim %d over %d CTAs: %d columns each, need a power of 2, at most 32, at least the cluster size", F, cs, fc)
		case F%8 != 0 || F%KB != 0:
			return fmt.Errorf("head dim %d must be a multiple of 8 and of the mini-batch %d", F, KB)
		case NT != KB*fc || NT%32 != 0 || NT > 1024:
			return fmt.Errorf("%d threads: the cluster kernel runs mini-batch x columns = %d, a multiple of 32 up to 1024", NT, KB*fc)
		}
		return nil
	}
	if g.v2() {
		switch lg := g.lanes(); {
		case F%4 != 0 || KB%4 != 0:
			return fmt.Errorf("head dim %d and mini-batch %d must be multiples of 4", F, KB)
		case F%lg != 0:
			return fmt.Errorf("head dim %d is not a multiple of %d lanes", F, lg)
		case NT%32 != 0 || NT > 1024 || NT < KB:
			return fmt.Errorf("%d threads: need a multiple of 32, at most 1024, at least the mini-batch", NT)
		case lg >= KB && (lg%KB != 0 || F%(lg/KB*4) != 0):
			return fmt.Errorf("%d lanes cannot split %d rows of length %d", lg, KB, F)
		}
		return nil
	}
	return checkRowGroups(F, KB, NT, H, g.MLP, KB, "the mini-batch")
}

// checkRowGroups states the row-group kernels' shape assumptions (the
// forward's and the inner backward's): a [K][F] tile splits into NT/F row
// groups (for mlp also [K][4F] into NT/4F) and NT threads are at least minNT
// (minWhat names it in the error).
func checkRowGroups(F, KB, NT, H int, mlp bool, minNT int, minWhat string) error {
	switch {
	case F%4 != 0 || KB%4 != 0:
		return fmt.Errorf("head dim %d and mini-batch %d must be multiples of 4", F, KB)
	case F < 32 && 32%F != 0, F >= 32 && F%32 != 0:
		return fmt.Errorf("head dim %d must divide 32 or be a multiple of 32", F)
	case NT%32 != 0 || NT > 1024 || NT < minNT:
		return fmt.Errorf("%d threads: need a multiple of 32, at most 1024, at least %s", NT, minWhat)
	case NT%H != 0:
		return fmt.Errorf("%d threads must be a multiple of the inner width %d", NT, H)
	case KB%(NT/F) != 0 || F%(NT/F) != 0:
		return fmt.Errorf("%d threads: %d row groups must divide mini-batch %d and head dim %d", NT, NT/F, KB, F)
	case mlp && (KB%(NT/H) != 0 || F%(NT/H) != 0):
		return fmt.Errorf("%d threads: %d row groups must divide mini-batch %d and head dim %d", NT, NT/H, KB, F)
	}
	return nil
}

// pickThreads returns want if it fits the shape, else the first count of a
// preference list that does.
func pickThreads(g geometry, want int) (int, error) {
	cands := []int{256, 512, 384, 128, 192, 768, 1024, 64, 32}
	if g.cl() { // one thread per owned element of the mini-batch
		cands = []int{g.KB * g.F / g.clusterSize()}
		want = 0
	}
	if g.MLP {
		cands = []int{512, 256, 384, 768, 1024, 128, 192, 64, 32} // 512: 8% faster than 256 on the H100 (run 1)
	}
	if want > 0 {
		cands = []int{want}
	}
	return firstFitting(cands, func(nt int) error { g.NT = nt; return g.check() })
}

// firstFitting is the first of cands that fits (fits returns nil), else the
// first candidate's error.
func firstFitting(cands []int, fits func(int) error) (int, error) {
	var first error
	for _, nt := range cands {
		err := fits(nt)
		if err == nil {
			return nt, nil
		}
		if first == nil {
			first = err
		}
	}
	return 0, first
}
