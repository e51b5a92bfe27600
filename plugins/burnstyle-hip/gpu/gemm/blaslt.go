package gemm

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// One BLASLt plan serves cuBLASLt (the cublaslt variant on cuda) and
// hipBLASLt (the default path on rocm). The two libraries make the same
// calls with their own constants, algorithm and heuristic-result types;
// ltLib holds what differs (ltlibs.go fills it for each), and the plan is
// written once: descriptors column-major as cuBLAS sees the product
// (cublasArgs: its A is our B, its B our A), batched by stride; the
// heuristic's top ltCandidates timed on the device; the fastest kept and
// recorded.

// ltCandidate is one heuristic result: its algorithm, whether the library
// marked it usable, and the workspace it needs.
type ltCandidate[A any] struct {
	algo      A
	usable    bool
	workspace uint64
}

// ltLib is one BLASLt library, as the plan needs it; A is its algorithm type.
type ltLib[A any] struct {
	name              string // "cublasLt", in errors and the timing line
	version, path     string // for env.versions and the record
	gpu.LtDescriptors        // the calls both libraries make alike
	// heuristic returns up to want results for the descriptors.
	heuristic func(desc, a, b, c, pref uintptr, want int) ([]ltCandidate[A], int32)
	matmul    func(desc uintptr, alpha unsafe.Pointer, a uint64, la uintptr, b uint64, lb uintptr, beta unsafe.Pointer,
		c uint64, lc uintptr, algo *A, ws, wsBytes uint64, stream uintptr) int32
	// describe names a picked algorithm for the record.
	describe func(c ltCandidate[A]) string
	// The library's values: attribute ids, the scale type, a cuBLAS
	// operation in its spelling, a dtype's types, its workspace.
	attrTransA, attrTransB, attrBatch, attrStride, attrMaxWorkspace int32
	scale                                                           int32
	op                                                              func(cublasOp int32) int32
	types                                                           func(dtype string) (in, out, compute int32)
	workspace                                                       uint64
	// reduce, when set, is a preference for 16-bit outputs: an attribute
	// and its uint32 value (cuBLASLt: split-K partial sums never in the
	// output type; hipBLASLt has no such preference, its sums are float32).
	reduce *[2]uint32
	// pathWorkspace is the device workspace the path holds beyond A, B, C.
	pathWorkspace int64
}

// ltPlan is one spec's descriptors, its workspace and the picked algorithm.
type ltPlan[A any] struct {
	lib                  *ltLib[A]
	desc, la, lb, lc, pf uintptr
	ws                   gpu.Ptr
	algo                 A
	picked               string
}

func (p *ltPlan[A]) check(op string, c int32) error {
	if c != 0 {
		return fmt.Errorf("%s %s: status %d", p.lib.name, op, c)
	}
	return nil
}

// describeGEMM makes g's descriptors and preference; on an error what was
// made is destroyed.
func describeGEMM[A any](lib *ltLib[A], g *gemmBufs) (*ltPlan[A], error) {
	p := &ltPlan[A]{lib: lib}
	x := g.args
	in, out, compute := lib.types(g.spec.Dtype)
	opA, opB := lib.op(x.opFirst), lib.op(x.opSecond)
	var err error
	ok := func(op string, c int32) bool { err = p.check(op, c); return err == nil }
	dims := func(op int32, rows, cols int32) (uint64, uint64) { // a stored operand's rows, cols
		if op == gpu.CublasOpT {
			return uint64(cols), uint64(rows)
		}
		return uint64(rows), uint64(cols)
	}
	layout := func(l *uintptr, dtype int32, rows, cols uint64, ld int32, stride int64) bool {
		batch := x.batch
		return ok("layout", lib.LayoutCreate(l, dtype, rows, cols, int64(ld))) &&
			ok("layout batch", lib.LayoutSet(*l, lib.attrBatch, unsafe.Pointer(&batch), 4)) &&
			ok("layout stride", lib.LayoutSet(*l, lib.attrStride, unsafe.Pointer(&stride), 8))
	}
	ar, ac := dims(x.opFirst, x.m, x.k)
	br, bc := dims(x.opSecond, x.k, x.n)
	wsBytes := lib.workspace
	_ = ok("matmul desc", lib.DescCreate(&p.desc, compute, lib.scale)) &&
		ok("trans a", lib.DescSet(p.desc, lib.attrTransA, unsafe.Pointer(&opA), 4)) &&
		ok("trans b", lib.DescSet(p.desc, lib.attrTransB, unsafe.Pointer(&opB), 4)) &&
		layout(&p.la, in, ar, ac, x.ldFirst, x.strideFirst) &&
		layout(&p.lb, in, br, bc, x.ldSecond, x.strideSecond) &&
		layout(&p.lc, out, uint64(x.m), uint64(x.n), x.ldc, x.strideC) &&
		ok("preference", lib.PrefCreate(&p.pf)) &&
		ok("workspace", lib.PrefSet(p.pf, lib.attrMaxWorkspace, unsafe.Pointer(&wsBytes), 8)) &&
		(lib.reduce == nil || g.t.outBytes == 4 ||
			ok("reduction", lib.PrefSet(p.pf, int32(lib.reduce[0]), unsafe.Pointer(&lib.reduce[1]), 4)))
	if err != nil {
		p.destroy()
		return nil, fmt.Errorf("%s: %w", g.spec, err)
	}
	return p, nil
}

// destroy frees the descriptors and the preference.
func (p *ltPlan[A]) destroy() {
	for _, l := range []uintptr{p.la, p.lb, p.lc} {
		if l != 0 {
			p.lib.LayoutDestroy(l)
		}
	}
	if p.desc != 0 {
		p.lib.DescDestroy(p.desc)
	}
	if p.pf != 0 {
		p.lib.PrefDestroy(p.pf)
	}
}

func (p *ltPlan[A]) free(r *gpu.Runtime) {
	p.destroy()
	if p.ws != 0 {
		r.Free(p.ws)
	}
}

// run enqueues one product with algo.
func (p *ltPlan[A]) run(r *gpu.Runtime, g *gemmBufs, algo *A) error {
	alpha, beta := float32(1), float32(0)
	return p.check(g.spec.String(), p.lib.matmul(p.desc, unsafe.Pointer(&alpha), uint64(g.b), p.la,
		uint64(g.a), p.lb, unsafe.Pointer(&beta), uint64(g.c), p.lc, algo, uint64(p.ws), p.lib.workspace, r.Stream))
}

// pick asks the heuristic for its top ltCandidates, times each usable one
// that fits the workspace (searchAlgos), keeps the fastest and says which
// it was and how it ranked.
func (p *ltPlan[A]) pick(ctx context.Context, r *gpu.Runtime, g *gemmBufs) error {
	res, code := p.lib.heuristic(p.desc, p.la, p.lb, p.lc, p.pf, ltCandidates)
	if err := p.check("heuristic", code); err != nil {
		return fmt.Errorf("%s: %w", g.spec, err)
	}
	best, times, err := searchAlgos(ctx, r, p.lib.name+" candidate", len(res),
		func(i int) bool { return res[i].usable && res[i].workspace <= p.lib.workspace },
		func(i int) error { return p.run(r, g, &res[i].algo) })
	if err != nil {
		return err
	}
	if best < 0 {
		return fmt.Errorf("%s: %s's heuristic returned no usable algorithm (%d results)", g.spec, p.lib.name, len(res))
	}
	p.algo = res[best].algo
	p.picked = fmt.Sprintf("heuristic result %d of %d (%s; candidates' median ms %v)", best+1, len(res), p.lib.describe(res[best]), times)
	return nil
}

// openLt is a BLASLt library's path: the plan, its workspace, its search,
// and the product with the picked algorithm.
func openLt[A any](ctx context.Context, d *gpu.Device, g *gemmBufs, lib *ltLib[A]) (*gemmPath, error) {
	p, err := describeGEMM(lib, g)
	if err != nil {
		return nil, err
	}
	r := d.RT
	if p.ws, err = r.Alloc(int64(lib.workspace)); err != nil {
		p.destroy()
		return nil, fmt.Errorf("%s: %w", g.spec, err)
	}
	if err := p.pick(ctx, r, g); err != nil {
		p.free(r)
		return nil, err
	}
	return &gemmPath{launch: func() error { return p.run(r, g, &p.algo) }, library: lib.version, libPath: lib.path,
		call: "one " + lib.name + "Matmul with " + p.picked, algo: p.picked, wsBytes: lib.pathWorkspace,
		free: func() { p.free(r) }}, nil
}
