package gemm

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// cuBLASLt constants (cublasLt.h).
const (
	ltDescTransA      = 3 // CUBLASLT_MATMUL_DESC_TRANSA, int32 cublasOperation_t
	ltDescTransB      = 4 // CUBLASLT_MATMUL_DESC_TRANSB
	ltLayoutBatch     = 5 // CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32
	ltLayoutStride    = 6 // CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64
	ltPrefMaxWS       = 1 // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64
	ltPrefReduceMask  = 3 // CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, uint32
	ltReduceNoOutType = 3 // INPLACE | COMPUTE_TYPE: split-K partial sums never in the 16-bit output type
	ltAlgoID          = 0 // CUBLASLT_ALGO_CONFIG_ID, int32
	ltAlgoTile        = 1 // CUBLASLT_ALGO_CONFIG_TILE_ID, uint32
	ltAlgoSplitK      = 2 // CUBLASLT_ALGO_CONFIG_SPLITK_NUM, int32
	ltAlgoStages      = 6 // CUBLASLT_ALGO_CONFIG_STAGES_ID, uint32
)

// ltPlan is one spec's descriptors, its workspace and the picked algorithm.
type ltPlan struct {
	b                    *gpu.CublasLt
	desc, la, lb, lc, pf uintptr
	ws                   gpu.Ptr
	algo                 gpu.LtAlgo
	picked               string
}

func (p *ltPlan) check(op string, c int32) error {
	if c != 0 {
		return fmt.Errorf("cublasLt %s: status %d", op, c)
	}
	return nil
}

// newLtPlan describes g's product to cuBLASLt, column-major as cuBLAS sees
// it (cublasArgs): its A is our B, its B our A.
func newLtPlan(d *gpu.Device, g *gemmBufs) (*ltPlan, error) {
	b, err := d.BLASLt()
	if err != nil {
		return nil, err
	}
	p := &ltPlan{b: b}
	x, t := g.args, g.t
	ok := func(op string, c int32) bool { err = p.check(op, c); return err == nil }
	dims := func(op int32, rows, cols int32) (uint64, uint64) { // a stored operand's rows, cols
		if op == gpu.CublasOpT {
			return uint64(cols), uint64(rows)
		}
		return uint64(rows), uint64(cols)
	}
	layout := func(l *uintptr, dtype int32, rows, cols uint64, ld int32, stride int64) bool {
		batch := x.batch
		return ok("layout", b.LayoutCreate(l, dtype, rows, cols, int64(ld))) &&
			ok("layout batch", b.LayoutSet(*l, ltLayoutBatch, unsafe.Pointer(&batch), 4)) &&
			ok("layout stride", b.LayoutSet(*l, ltLayoutStride, unsafe.Pointer(&stride), 8))
	}
	ar, ac := dims(x.opFirst, x.m, x.k)
	br, bc := dims(x.opSecond, x.k, x.n)
	wsBytes, mask := uint64(gpu.CublasWorkspace), uint32(ltReduceNoOutType)
	_ = ok("matmul desc", b.DescCreate(&p.desc, t.compute, gpu.CudaR32F)) &&
		ok("trans a", b.DescSet(p.desc, ltDescTransA, unsafe.Pointer(&x.opFirst), 4)) &&
		ok("trans b", b.DescSet(p.desc, ltDescTransB, unsafe.Pointer(&x.opSecond), 4)) &&
		layout(&p.la, t.in, ar, ac, x.ldFirst, x.strideFirst) &&
		layout(&p.lb, t.in, br, bc, x.ldSecond, x.strideSecond) &&
		layout(&p.lc, t.out, uint64(x.m), uint64(x.n), x.ldc, x.strideC) &&
		ok("preference", b.PrefCreate(&p.pf)) &&
		ok("workspace", b.PrefSet(p.pf, ltPrefMaxWS, unsafe.Pointer(&wsBytes), 8)) &&
		(t.outBytes == 4 || ok("reduction", b.PrefSet(p.pf, ltPrefReduceMask, unsafe.Pointer(&mask), 4)))
	if err == nil {
		p.ws, err = d.RT.Alloc(gpu.CublasWorkspace)
	}
	if err != nil {
		p.free(d.RT)
		return nil, fmt.Errorf("%s: %w", g.spec, err)
	}
	return p, nil
}

func (p *ltPlan) free(r *gpu.Runtime) {
	for _, l := range []uintptr{p.la, p.lb, p.lc} {
		if l != 0 {
			p.b.LayoutDestroy(l)
		}
	}
	if p.desc != 0 {
		p.b.DescDestroy(p.desc)
	}
	if p.pf != 0 {
		p.b.PrefDestroy(p.pf)
	}
	if p.ws != 0 {
		r.Free(p.ws)
	}
}

// run enqueues one product with the picked algorithm (algo: another one).
func (p *ltPlan) run(r *gpu.Runtime, g *gemmBufs, algo *gpu.LtAlgo) error {
	alpha, beta := float32(1), float32(0)
	return p.check(g.spec.String(), p.b.Matmul(p.b.H, p.desc, unsafe.Pointer(&alpha), uint64(g.b), p.la,
		uint64(g.a), p.lb, unsafe.Pointer(&beta), uint64(g.c), p.lc, uint64(g.c), p.lc, algo,
		uint64(p.ws), gpu.CublasWorkspace, r.Stream))
}

// pick asks the heuristic for its top ltCandidates, times each
// (searchAlgos), keeps the fastest and says which it was and how it ranked.
func (p *ltPlan) pick(ctx context.Context, r *gpu.Runtime, g *gemmBufs) error {
	res := make([]gpu.LtHeuristic, ltCandidates)
	var n int32
	if err := p.check("heuristic", p.b.Heuristic(p.b.H, p.desc, p.la, p.lb, p.lc, p.lc, p.pf, ltCandidates, &res[0], &n)); err != nil {
		return fmt.Errorf("%s: %w", g.spec, err)
	}
	best, times, err := searchAlgos(ctx, r, "cublaslt candidate", int(n), func(i int) bool { return res[i].State == 0 },
		func(i int) error { return p.run(r, g, &res[i].Algo) })
	if err != nil {
		return err
	}
	if best < 0 {
		return fmt.Errorf("%s: cuBLASLt's heuristic returned no usable algorithm (%d results)", g.spec, n)
	}
	p.algo = res[best].Algo
	attr := func(a int32) int32 {
		var v int32
		var w uint64
		p.b.AlgoGet(&p.algo, a, unsafe.Pointer(&v), 4, &w)
		return v
	}
	p.picked = fmt.Sprintf("heuristic result %d of %d (algo id %d, tile %d, split-k %d, stages %d; candidates' median ms %v)",
		best+1, n, attr(ltAlgoID), attr(ltAlgoTile), attr(ltAlgoSplitK), attr(ltAlgoStages), times)
	return nil
}

// openCublasLt is the cublaslt variant's path: the plan, its search, and
// the product with the picked algorithm.
func openCublasLt(ctx context.Context, d *gpu.Device, g *gemmBufs) (*gemmPath, error) {
	p, err := newLtPlan(d, g)
	if err != nil {
		return nil, err
	}
	r := d.RT
	if err := p.pick(ctx, r, g); err != nil {
		p.free(r)
		return nil, err
	}
	// the device's cuBLAS workspace and the plan's
	return &gemmPath{launch: func() error { return p.run(r, g, &p.algo) }, library: p.b.LtVersion(), libPath: p.b.Path,
		call: "one cublasLtMatmul with " + p.picked, algo: p.picked, wsBytes: 2 * gpu.CublasWorkspace,
		free: func() { p.free(r) }}, nil
}
