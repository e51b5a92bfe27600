package gpu

// cuBLASLt for the GEMM workload's "cublaslt" variant: the same product as
// the cuBLAS path (gemm.go), through cublasLtMatmul with an algorithm this
// code picks, by timing the top results of cuBLASLt's heuristic on the
// device, and records. Bound at run time like cuBLAS; the ROCm analogue
// (hipBLASLt) is not bound: no registry here provides the library.

import (
	"context"
	"fmt"
	"slices"
	"unsafe"
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
	// ltCandidates is how many of the heuristic's results are timed.
	ltCandidates = 8
)

// ltAlgo is cublasLtMatmulAlgo_t; ltHeuristic cublasLtMatmulHeuristicResult_t.
type ltAlgo [8]uint64

type ltHeuristic struct {
	algo      ltAlgo
	workspace uint64
	state     int32
	waves     float32
	_         [4]int32
}

type cublasLt struct {
	h             uintptr
	path          string
	create        func(h *uintptr) int32
	destroy       func(h uintptr) int32
	version       func() uint64
	descCreate    func(d *uintptr, compute, scale int32) int32
	descDestroy   func(d uintptr) int32
	descSet       func(d uintptr, attr int32, buf unsafe.Pointer, n uint64) int32
	layoutCreate  func(l *uintptr, dtype int32, rows, cols uint64, ld int64) int32
	layoutDestroy func(l uintptr) int32
	layoutSet     func(l uintptr, attr int32, buf unsafe.Pointer, n uint64) int32
	prefCreate    func(p *uintptr) int32
	prefDestroy   func(p uintptr) int32
	prefSet       func(p uintptr, attr int32, buf unsafe.Pointer, n uint64) int32
	heuristic     func(h, desc, a, b, c, d, pref uintptr, want int32, out *ltHeuristic, got *int32) int32
	matmul        func(h, desc uintptr, alpha unsafe.Pointer, A uint64, la uintptr, B uint64, lb uintptr,
		beta unsafe.Pointer, C uint64, lc uintptr, D uint64, ld uintptr, algo *ltAlgo, ws, wsBytes uint64, stream uintptr) int32
	algoGet func(algo *ltAlgo, attr int32, buf unsafe.Pointer, n uint64, written *uint64) int32
}

var cublasLtNames = []string{"cublasLtCreate", "cublasLtDestroy", "cublasLtGetVersion",
	"cublasLtMatmulDescCreate", "cublasLtMatmulDescDestroy", "cublasLtMatmulDescSetAttribute",
	"cublasLtMatrixLayoutCreate", "cublasLtMatrixLayoutDestroy", "cublasLtMatrixLayoutSetAttribute",
	"cublasLtMatmulPreferenceCreate", "cublasLtMatmulPreferenceDestroy", "cublasLtMatmulPreferenceSetAttribute",
	"cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmul", "cublasLtMatmulAlgoConfigGetAttribute"}

func (b *cublasLt) table() map[string]any {
	ptrs := []any{&b.create, &b.destroy, &b.version, &b.descCreate, &b.descDestroy, &b.descSet,
		&b.layoutCreate, &b.layoutDestroy, &b.layoutSet, &b.prefCreate, &b.prefDestroy, &b.prefSet,
		&b.heuristic, &b.matmul, &b.algoGet}
	t := map[string]any{}
	for i, n := range cublasLtNames {
		t[n] = ptrs[i]
	}
	return t
}

// specCUBLASLt: cuBLAS's own sibling, where openCUBLAS already loaded it.
var specCUBLASLt = libSpec{"cuBLASLt", "XBENCH_LIBCUBLASLT",
	[]string{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}, cudaToolkitDirs()}

// bindCUBLASLt resolves every symbol of the binding (no handle: no GPU
// needed), for the symbol test and for openCUBLASLt.
func bindCUBLASLt() (*cublasLt, error) {
	lib, path, err := specCUBLASLt.open()
	if err != nil {
		return nil, err
	}
	b := &cublasLt{path: path}
	if err := bind(lib, path, b.table()); err != nil {
		return nil, err
	}
	return b, nil
}

// lt is the device's cuBLASLt handle, opened on first use. On the worker.
func (d *Device) lt() (*cublasLt, error) {
	if d.ltLib != nil || d.ltErr != nil {
		return d.ltLib, d.ltErr
	}
	if d.rt.kind != "cuda" {
		d.ltErr = fmt.Errorf("the cublaslt variant needs cuda (on %s no hipBLASLt is bound)", d.rt.kind)
		return nil, d.ltErr
	}
	b, err := bindCUBLASLt()
	if err == nil {
		if c := b.create(&b.h); c != 0 {
			err = fmt.Errorf("cublasLtCreate: status %d", c)
		}
	}
	d.ltLib, d.ltErr = b, err
	if err != nil {
		d.ltLib = nil
	}
	return d.ltLib, d.ltErr
}

// ltPlan is one spec's descriptors, its workspace and the picked algorithm.
type ltPlan struct {
	b                    *cublasLt
	desc, la, lb, lc, pf uintptr
	ws                   devPtr
	algo                 ltAlgo
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
func (d *Device) newLtPlan(g *gemmBufs) (*ltPlan, error) {
	b, err := d.lt()
	if err != nil {
		return nil, err
	}
	p := &ltPlan{b: b}
	x, t := g.args, g.t
	ok := func(op string, c int32) bool { err = p.check(op, c); return err == nil }
	dims := func(op int32, rows, cols int32) (uint64, uint64) { // a stored operand's rows, cols
		if op == cublasOpT {
			return uint64(cols), uint64(rows)
		}
		return uint64(rows), uint64(cols)
	}
	layout := func(l *uintptr, dtype int32, rows, cols uint64, ld int32, stride int64) bool {
		batch := x.batch
		return ok("layout", b.layoutCreate(l, dtype, rows, cols, int64(ld))) &&
			ok("layout batch", b.layoutSet(*l, ltLayoutBatch, unsafe.Pointer(&batch), 4)) &&
			ok("layout stride", b.layoutSet(*l, ltLayoutStride, unsafe.Pointer(&stride), 8))
	}
	ar, ac := dims(x.opFirst, x.m, x.k)
	br, bc := dims(x.opSecond, x.k, x.n)
	wsBytes, mask := uint64(cublasWorkspace), uint32(ltReduceNoOutType)
	_ = ok("matmul desc", b.descCreate(&p.desc, t.compute, cudaR32F)) &&
		ok("trans a", b.descSet(p.desc, ltDescTransA, unsafe.Pointer(&x.opFirst), 4)) &&
		ok("trans b", b.descSet(p.desc, ltDescTransB, unsafe.Pointer(&x.opSecond), 4)) &&
		layout(&p.la, t.in, ar, ac, x.ldFirst, x.strideFirst) &&
		layout(&p.lb, t.in, br, bc, x.ldSecond, x.strideSecond) &&
		layout(&p.lc, t.out, uint64(x.m), uint64(x.n), x.ldc, x.strideC) &&
		ok("preference", b.prefCreate(&p.pf)) &&
		ok("workspace", b.prefSet(p.pf, ltPrefMaxWS, unsafe.Pointer(&wsBytes), 8)) &&
		(t.outBytes == 4 || ok("reduction", b.prefSet(p.pf, ltPrefReduceMask, unsafe.Pointer(&mask), 4)))
	if err == nil {
		p.ws, err = d.rt.alloc(cublasWorkspace)
	}
	if err != nil {
		p.free(d.rt)
		return nil, fmt.Errorf("%s: %w", g.spec, err)
	}
	return p, nil
}

func (p *ltPlan) free(r *rt) {
	for _, l := range []uintptr{p.la, p.lb, p.lc} {
		if l != 0 {
			p.b.layoutDestroy(l)
		}
	}
	if p.desc != 0 {
		p.b.descDestroy(p.desc)
	}
	if p.pf != 0 {
		p.b.prefDestroy(p.pf)
	}
	if p.ws != 0 {
		r.free(p.ws)
	}
}

// run enqueues one product with the picked algorithm (algo: another one).
func (p *ltPlan) run(r *rt, g *gemmBufs, algo *ltAlgo) error {
	alpha, beta := float32(1), float32(0)
	return p.check(g.spec.String(), p.b.matmul(p.b.h, p.desc, unsafe.Pointer(&alpha), uint64(g.b), p.la,
		uint64(g.a), p.lb, unsafe.Pointer(&beta), uint64(g.c), p.lc, uint64(g.c), p.lc, algo,
		uint64(p.ws), cublasWorkspace, r.stream))
}

// pick asks the heuristic for its top ltCandidates, times each (one
// untimed call, then five between device events, median), keeps the
// fastest and says which it was and how it ranked.
func (p *ltPlan) pick(ctx context.Context, r *rt, g *gemmBufs) error {
	res := make([]ltHeuristic, ltCandidates)
	var n int32
	if err := p.check("heuristic", p.b.heuristic(p.b.h, p.desc, p.la, p.lb, p.lc, p.lc, p.pf, ltCandidates, &res[0], &n)); err != nil {
		return fmt.Errorf("%s: %w", g.spec, err)
	}
	best, bestMs := -1, 0.0
	var times []string
	for i := 0; i < int(n); i++ {
		if res[i].state != 0 {
			continue
		}
		s, err := r.timedLaunches(ctx, "cublaslt candidate", func() error { return p.run(r, g, &res[i].algo) }, 1, 5, 0)
		if err != nil {
			return err
		}
		slices.Sort(s)
		ms := s[len(s)/2]
		times = append(times, fmt.Sprintf("%.4g", ms))
		if best < 0 || ms < bestMs {
			best, bestMs = i, ms
		}
	}
	if best < 0 {
		return fmt.Errorf("%s: cuBLASLt's heuristic returned no usable algorithm (%d results)", g.spec, n)
	}
	p.algo = res[best].algo
	attr := func(a int32) int32 {
		var v int32
		var w uint64
		p.b.algoGet(&p.algo, a, unsafe.Pointer(&v), 4, &w)
		return v
	}
	p.picked = fmt.Sprintf("heuristic result %d of %d (algo id %d, tile %d, split-k %d, stages %d; candidates' median ms %v)",
		best+1, n, attr(ltAlgoID), attr(ltAlgoTile), attr(ltAlgoSplitK), attr(ltAlgoStages), times)
	return nil
}

// ltVersion is "cublasLt MAJOR.MINOR.PATCH".
func (b *cublasLt) ltVersion() string {
	v := b.version()
	return fmt.Sprintf("cublasLt %d.%d.%d", v/10000, v%10000/100, v%100)
}

// ExportGEMMWith is Device.ExportGEMMWith on Shared("cuda").
func ExportGEMMWith(ctx context.Context, spec GEMMSpec, a, b []float32, mode GEMMMode) ([]float32, error) {
	d, err := Shared("cuda")
	if err != nil {
		return nil, err
	}
	return d.ExportGEMMWith(ctx, spec, a, b, mode)
}
