package gemm

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// hipBLASLt, the product's library on rocm: descriptors as the cuBLASLt
// variant makes them (column-major, batched by stride), the heuristic's top
// ltCandidates timed on the device, the fastest kept and recorded.
// hipBLASLt has no preference for where split-K partial sums are reduced
// (cuBLASLt's REDUCTION_SCHEME); its partial sums are float32 with
// HIPBLAS_COMPUTE_32F.

// rocmType is how one dtype maps onto hipBLASLt and rocBLAS (-1: the
// library is not asked for it).
type rocmType struct {
	hipIn, hipOut, hipCompute int32 // hipDataType of A and B, of C; hipblasComputeType_t
	rocIn, rocOut             int32 // rocblas_datatype; rocBLAS computes in rocblas_datatype_f32_r
}

func rocmTypeOf(dtype string) rocmType {
	switch dtype {
	case "float32":
		return rocmType{gpu.HipR32F, gpu.HipR32F, gpu.HipblasCompute32F, gpu.RocblasF32, gpu.RocblasF32}
	case "tf32": // xf32 (CDNA3); rocBLAS has it only as a handle's math mode, not bound
		return rocmType{gpu.HipR32F, gpu.HipR32F, gpu.HipblasCompute32FFastTF32, -1, -1}
	case "bfloat16":
		return rocmType{gpu.HipR16BF, gpu.HipR16BF, gpu.HipblasCompute32F, gpu.RocblasBF16, gpu.RocblasBF16}
	case "float16":
		return rocmType{gpu.HipR16F, gpu.HipR16F, gpu.HipblasCompute32F, gpu.RocblasF16, gpu.RocblasF16}
	}
	return rocmType{-1, -1, -1, -1, -1}
}

type hipLtPlan struct {
	b                    *gpu.HipblasLt
	desc, la, lb, lc, pf uintptr
	ws                   gpu.Ptr
	algo                 gpu.HipLtAlgo
	picked               string
}

func (p *hipLtPlan) check(op string, c int32) error {
	if c != 0 {
		return fmt.Errorf("hipblasLt %s: status %d", op, c)
	}
	return nil
}

func newHipLtPlan(d *gpu.Device, g *gemmBufs) (*hipLtPlan, error) {
	b, err := d.HipBLASLt()
	if err != nil {
		return nil, err
	}
	p := &hipLtPlan{b: b}
	x, t := g.args, rocmTypeOf(g.spec.Dtype)
	opA, opB := amdOp(x.opFirst), amdOp(x.opSecond)
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
			ok("layout batch", b.LayoutSet(*l, gpu.HipblasLtLayoutBatch, unsafe.Pointer(&batch), 4)) &&
			ok("layout stride", b.LayoutSet(*l, gpu.HipblasLtLayoutStride, unsafe.Pointer(&stride), 8))
	}
	ar, ac := dims(x.opFirst, x.m, x.k)
	br, bc := dims(x.opSecond, x.k, x.n)
	wsBytes := uint64(gpu.HipblasLtWorkspace)
	_ = ok("matmul desc", b.DescCreate(&p.desc, t.hipCompute, gpu.HipR32F)) &&
		ok("trans a", b.DescSet(p.desc, gpu.HipblasLtDescTransA, unsafe.Pointer(&opA), 4)) &&
		ok("trans b", b.DescSet(p.desc, gpu.HipblasLtDescTransB, unsafe.Pointer(&opB), 4)) &&
		layout(&p.la, t.hipIn, ar, ac, x.ldFirst, x.strideFirst) &&
		layout(&p.lb, t.hipIn, br, bc, x.ldSecond, x.strideSecond) &&
		layout(&p.lc, t.hipOut, uint64(x.m), uint64(x.n), x.ldc, x.strideC) &&
		ok("preference", b.PrefCreate(&p.pf)) &&
		ok("workspace", b.PrefSet(p.pf, gpu.HipblasLtPrefMaxWorkspace, unsafe.Pointer(&wsBytes), 8))
	if err == nil {
		p.ws, err = d.RT.Alloc(gpu.HipblasLtWorkspace)
	}
	if err != nil {
		p.free(d.RT)
		return nil, fmt.Errorf("%s: %w", g.spec, err)
	}
	return p, nil
}

func (p *hipLtPlan) free(r *gpu.Runtime) {
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

func (p *hipLtPlan) run(r *gpu.Runtime, g *gemmBufs, algo *gpu.HipLtAlgo) error {
	alpha, beta := float32(1), float32(0)
	return p.check(g.spec.String(), p.b.Matmul(p.b.H, p.desc, unsafe.Pointer(&alpha), uint64(g.b), p.la,
		uint64(g.a), p.lb, unsafe.Pointer(&beta), uint64(g.c), p.lc, uint64(g.c), p.lc, algo,
		uint64(p.ws), gpu.HipblasLtWorkspace, r.Stream))
}

// pick asks the heuristic for its top ltCandidates, times each and keeps
// the fastest, recording its rank and its opaque bytes.
func (p *hipLtPlan) pick(ctx context.Context, r *gpu.Runtime, g *gemmBufs) error {
	res := make([]gpu.HipLtHeuristic, ltCandidates)
	var n int32
	if err := p.check("heuristic", p.b.Heuristic(p.b.H, p.desc, p.la, p.lb, p.lc, p.lc, p.pf, ltCandidates, &res[0], &n)); err != nil {
		return fmt.Errorf("%s: %w", g.spec, err)
	}
	best, times, err := searchAlgos(ctx, r, "hipblaslt candidate", int(n),
		func(i int) bool { return res[i].State == 0 && res[i].Workspace <= gpu.HipblasLtWorkspace },
		func(i int) error { return p.run(r, g, &res[i].Algo) })
	if err != nil {
		return err
	}
	if best < 0 {
		return fmt.Errorf("%s: hipBLASLt's heuristic returned no usable algorithm (%d results)", g.spec, n)
	}
	p.algo = res[best].Algo
	p.picked = fmt.Sprintf("heuristic result %d of %d (algo bytes %s, workspace %d B; candidates' median ms %v)",
		best+1, n, p.algo, res[best].Workspace, times)
	return nil
}

// openHipLt is the default path on rocm.
func openHipLt(ctx context.Context, d *gpu.Device, g *gemmBufs) (*gemmPath, error) {
	p, err := newHipLtPlan(d, g)
	if err != nil {
		return nil, err
	}
	r := d.RT
	if err := p.pick(ctx, r, g); err != nil {
		p.free(r)
		return nil, err
	}
	return &gemmPath{launch: func() error { return p.run(r, g, &p.algo) }, library: p.b.LtVersion(), libPath: p.b.Path,
		call: "one hipblasLtMatmul with " + p.picked, algo: p.picked, wsBytes: gpu.HipblasLtWorkspace,
		free: func() { p.free(r) }}, nil
}
