package cpu

import (
	"fmt"

	"github.com/xbench/xbench/harness/numeric"
	"github.com/xbench/xbench/harness/tensorfile"
)

// GEMM is the standalone dense product of the "gemm" workload:
// C[b] = op(A[b]) @ op(B[b]) for b in [0, batch), all row-major. A is stored
// [batch, m, k], or [batch, k, m] when transA; B is stored [batch, k, n], or
// [batch, n, k] when transB; C comes back as a new [batch, m, n].
//
// Both operands are first packed (in parallel over batch) into the NT form
// MatMulNT reads — A as [m, k], B as [n, k], each read contiguously along k —
// which costs O(mk + nk) against the product's O(mnk). Each product is then
// the TTT reference model's MatMulNT (its cache-blocked 2x4 register kernel,
// spread over GOMAXPROCS goroutines by tile of C). Accumulation is float32; every element of C is
// summed in a fixed order by one goroutine, so results are bitwise
// reproducible. A slice shorter than its shape panics, as MatMulNT does.
func GEMM(batch, m, n, k int, transA, transB bool, a, b []float32) []float32 {
	if batch < 0 || m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("cpu.GEMM: negative shape batch=%d m=%d n=%d k=%d", batch, m, n, k))
	}
	if len(a) < batch*m*k || len(b) < batch*k*n {
		panic(fmt.Sprintf("cpu.GEMM: operands of %d and %d elements for batch=%d m=%d n=%d k=%d",
			len(a), len(b), batch, m, n, k))
	}
	c := make([]float32, batch*m*n)
	if batch == 0 || m == 0 || n == 0 || k == 0 {
		return c
	}
	// Pack: ap is [batch, m, k], bp is [batch, n, k]. Operands already in
	// that form are used in place.
	ap, bp := a[:batch*m*k], b[:batch*k*n]
	if transA || !transB {
		if transA {
			ap = make([]float32, batch*m*k)
		}
		if !transB {
			bp = make([]float32, batch*n*k)
		}
		numeric.ParallelFor(2*batch, func(_, t int) {
			i := t / 2
			switch {
			case t%2 == 0 && transA: // stored [k, m]
				numeric.TransposeInto(ap[i*m*k:(i+1)*m*k], a[i*m*k:(i+1)*m*k], k, m)
			case t%2 == 1 && !transB: // stored [k, n]
				numeric.TransposeInto(bp[i*n*k:(i+1)*n*k], b[i*k*n:(i+1)*k*n], k, n)
			}
		})
	}
	for bi := range batch {
		numeric.MatMulNT(c[bi*m*n:(bi+1)*m*n], ap[bi*m*k:(bi+1)*m*k], bp[bi*n*k:(bi+1)*n*k], m, k, n)
	}
	return c
}

// GEMMDtype is GEMM at a workload dtype: "float32" and "tf32" are computed
// in float32 (the CPU has no TF32 unit, so tf32 is simply exact float32);
// "bfloat16" and "float16" round both inputs to that type (round to nearest
// even) before the float32-accumulated product and round C to it after, as
// a GPU with 16-bit inputs, float32 accumulation and a 16-bit output does.
// "float8_e4m3" is an error: unsupported on cpu. a and b are not modified.
func GEMMDtype(dtype string, batch, m, n, k int, transA, transB bool, a, b []float32) ([]float32, error) {
	if batch < 0 || m < 0 || n < 0 || k < 0 {
		return nil, fmt.Errorf("gemm: negative shape batch=%d m=%d n=%d k=%d", batch, m, n, k)
	}
	if len(a) != batch*m*k || len(b) != batch*k*n {
		return nil, fmt.Errorf("gemm: A has %d elements and B %d; batch=%d m=%d n=%d k=%d needs %d and %d",
			len(a), len(b), batch, m, n, k, batch*m*k, batch*k*n)
	}
	if dtype == "float8_e4m3" {
		return nil, fmt.Errorf("gemm: dtype float8_e4m3 is unsupported on cpu")
	}
	round, err := Rounding(dtype)
	if err != nil {
		return nil, fmt.Errorf("gemm: %w", err)
	}
	c := GEMM(batch, m, n, k, transA, transB, Rounded(round, a), Rounded(round, b))
	if round == nil {
		return c, nil
	}
	for i, x := range c {
		c[i] = round(x)
	}
	return c, nil
}

// The half-precision conversions are tensorfile's (one definition for
// every Go component); these names keep the package's callers short.
var (
	BF16Bits     = tensorfile.BF16Bits
	FromBF16Bits = tensorfile.FromBF16Bits
	RoundBF16    = tensorfile.RoundBF16
	F16Bits      = tensorfile.F16Bits
	FromF16Bits  = tensorfile.FromF16Bits
	RoundF16     = tensorfile.RoundF16
)
