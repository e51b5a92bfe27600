package reference

import "github.com/xbench/xbench/harness/numeric"

// The dense products of the backward, in the NT form MatMulNT computes.
// A projection y = x @ W (W [in, out], held transposed as wt [out, in])
// has dx = dy @ W^T, which is MatMulNT with W itself in the right operand's
// place, and dW = x^T @ dy, which is MatMulNT of the two transposes.

// weightGrad sets dw [in, out] = x^T @ dy for dy [n, out], given xt [in, n]
// (x already transposed: several weights share one input); dyt [out, n]
// is scratch for dy's transpose.
func weightGrad[T Float](dw, xt, dy, dyt []T, n, in, out int) {
	numeric.TransposeInto(dyt, dy, n, out)
	numeric.MatMulNT(dw, xt, dyt, in, n, out)
}

// addMatMulNT adds a[m,k] @ bt[n,k]^T into c, through tmp [m, n].
func addMatMulNT[T Float](c, tmp, a, bt []T, m, k, n int) {
	numeric.MatMulNT(tmp, a, bt, m, k, n)
	addInto(c[:m*n], tmp[:m*n])
}
