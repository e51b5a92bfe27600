package gemm

import (
	"fmt"
	"unsafe"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// The device buffers of one product and the cuBLAS call on them.

// gemmBufs are one product's device buffers.
type gemmBufs struct {
	a, b, c gpu.Ptr
	t       gemmType
	spec    Spec
	args    gemmArgs
	bytes   int64 // A + B + C
}

// allocGEMM allocates A, B and C (C rounded up to whole 32-bit words, so
// it can be poisoned with fill32). On the worker thread.
func allocGEMM(d *gpu.Device, spec Spec, t gemmType) (*gemmBufs, error) {
	r := d.RT
	na, nb, nc := spec.sizes(t)
	nc = (nc + 3) / 4 * 4
	g := &gemmBufs{t: t, spec: spec, args: cublasArgs(spec), bytes: na + nb + nc}
	var err error
	if g.a, err = r.Alloc(na); err == nil {
		if g.b, err = r.Alloc(nb); err == nil {
			g.c, err = r.Alloc(nc)
		}
	}
	if err != nil {
		g.free(r)
		return nil, fmt.Errorf("%s: %w", spec, err)
	}
	return g, nil
}

func (g *gemmBufs) free(r *gpu.Runtime) {
	for _, p := range []gpu.Ptr{g.a, g.b, g.c} {
		if p != 0 {
			r.Free(p)
		}
	}
}

// prepare sets the handle's math mode and stream for g's dtype; the Models
// of the device set their own before each of their calls.
func prepareGEMM(d *gpu.Device, g *gemmBufs) error {
	b := d.RT.BLAS
	if err := b.Check("set math mode", b.SetMathMode(b.H, g.t.math)); err != nil {
		return err
	}
	return b.Check("set stream", b.SetStream(b.H, d.RT.Stream))
}

// run enqueues one product C = op(A) op(B). On the worker thread.
func runGEMM(d *gpu.Device, g *gemmBufs) error {
	b := d.RT.BLAS
	alpha, beta := float32(1), float32(0)
	x := g.args
	t := g.t
	if b.GemmSB != nil {
		return b.Check(g.spec.String(), b.GemmSB(b.H, x.opFirst, x.opSecond, x.m, x.n, x.k, unsafe.Pointer(&alpha),
			uint64(g.b), t.in, x.ldFirst, x.strideFirst, uint64(g.a), t.in, x.ldSecond, x.strideSecond,
			unsafe.Pointer(&beta), uint64(g.c), t.out, x.ldc, x.strideC, x.batch, t.compute, gpu.CublasGemmDefault))
	}
	in, out := int64(t.inBytes), int64(t.outBytes)
	for i := int64(0); i < int64(x.batch); i++ {
		if err := b.Check(g.spec.String(), b.GemmEx(b.H, x.opFirst, x.opSecond, x.m, x.n, x.k, unsafe.Pointer(&alpha),
			uint64(g.b)+uint64(i*x.strideFirst*in), t.in, x.ldFirst,
			uint64(g.a)+uint64(i*x.strideSecond*in), t.in, x.ldSecond, unsafe.Pointer(&beta),
			uint64(g.c)+uint64(i*x.strideC*out), t.out, x.ldc, t.compute, gpu.CublasGemmDefault)); err != nil {
			return err
		}
	}
	return nil
}

// libraryVersion is "cublas MAJOR.MINOR.PATCH" from cublasGetVersion
// (major*10000 + minor*100 + patch). On the worker thread.
func libraryVersion(d *gpu.Device) string {
	b := d.RT.BLAS
	var v int32
	if b.Version(b.H, &v) != 0 {
		return "cublas (version unknown)"
	}
	return fmt.Sprintf("cublas %d.%d.%d", v/10000, v%10000/100, v%100)
}
