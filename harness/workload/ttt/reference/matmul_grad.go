package reference

// The dense products of the backward, in the NT form MatMulNT computes.
// A projection y = x @ W (W [in, out], held transposed as wt [out, in])
// has dx = dy @ W^T, which is MatMulNT with W itself in the right operand's
// place, and dW = x^T @ dy, which is MatMulNT of the two transposes.

// transposed writes the [cols, rows] transpose of src [rows, cols] into
// dst, blocks of 32 rows in parallel.
func transposed[T Float](dst, src []T, rows, cols int) {
	const blk = 32
	ParallelFor((rows+blk-1)/blk, func(_, b int) {
		r0, r1 := b*blk, min((b+1)*blk, rows)
		for j0 := 0; j0 < cols; j0 += blk {
			j1 := min(j0+blk, cols)
			for i := r0; i < r1; i++ {
				row := src[i*cols : (i+1)*cols]
				for j := j0; j < j1; j++ {
					dst[j*rows+i] = row[j]
				}
			}
		}
	})
}

// weightGrad sets dw [in, out] = x^T @ dy for dy [n, out], given xt [in, n]
// (x already transposed: several weights share one input); dyt [out, n]
// is scratch for dy's transpose.
func weightGrad[T Float](dw, xt, dy, dyt []T, n, in, out int) {
	transposed(dyt, dy, n, out)
	MatMulNT(dw, xt, dyt, in, n, out)
}

// addMatMulNT adds a[m,k] @ bt[n,k]^T into c, through tmp [m, n].
func addMatMulNT[T Float](c, tmp, a, bt []T, m, k, n int) {
	MatMulNT(tmp, a, bt, m, k, n)
	addInto(c[:m*n], tmp[:m*n])
}
