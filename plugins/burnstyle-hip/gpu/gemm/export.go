package gemm

import (
	"context"
	"fmt"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// Running one product on given inputs and reading C back.

// ExportGEMM uploads a and b (rounded to bfloat16 or float16 on the host for
// those dtypes), runs one product and returns C as float32 [batch, m, n]
// (widened exactly from a 16-bit C). C is poisoned with NaN first, so an
// element the product misses shows.
func Export(ctx context.Context, d *gpu.Device, spec Spec, a, b []float32) ([]float32, error) {
	return ExportWith(ctx, d, spec, a, b, Mode{})
}

// ExportWith is Export through mode's library (mode.Lt: cuBLASLt with the
// algorithm TimeWith would pick; on rocm hipBLASLt likewise, or rocBLAS with
// mode.RocBLAS); Cold and Graph do not apply.
func ExportWith(ctx context.Context, d *gpu.Device, spec Spec, a, b []float32, mode Mode) ([]float32, error) {
	if err := supportsWith(d, spec, mode); err != nil {
		return nil, err
	}
	B, M, N, K := spec.Batch, spec.M, spec.N, spec.K
	if len(a) != B*M*K || len(b) != B*K*N {
		return nil, fmt.Errorf("%s: A has %d elements and B %d; want %d and %d", spec, len(a), len(b), B*M*K, B*K*N)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, _ := gemmTypeOf(spec.Dtype)
	ha, hb := gpu.Encode(a, t.in), gpu.Encode(b, t.in)
	raw := make([]byte, int64(B)*int64(M)*int64(N)*int64(t.outBytes))
	err := d.W.Do(func() error {
		r := d.RT
		g, err := allocGEMM(d, spec, t)
		if err != nil {
			return err
		}
		defer g.free(r)
		if err := r.HtoD(g.a, ha); err != nil {
			return err
		}
		if err := r.HtoD(g.b, hb); err != nil {
			return err
		}
		_, _, nc := spec.sizes(t)
		if err := r.Fill32(g.c, gpu.NaNWord(t.out), (nc+3)/4); err != nil {
			return err
		}
		p, err := openPath(ctx, d, g, mode)
		if err != nil {
			return err
		}
		defer p.free()
		if err := r.Fill32(g.c, gpu.NaNWord(t.out), (nc+3)/4); err != nil { // an algorithm search wrote C
			return err
		}
		run := p.launch
		if err := run(); err != nil {
			r.Sync()
			return err
		}
		if err := r.Sync(); err != nil {
			return err
		}
		return r.DtoH(raw, g.c)
	})
	if err != nil {
		return nil, err
	}
	return gpu.Decode(raw, t.out), nil
}
