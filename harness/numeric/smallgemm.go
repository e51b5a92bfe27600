package numeric

// GemmNN is the serial kernel of the inner loop, whose matrices are small
// (K = 16 rows, f or 4f wide) and already spread over cores by (sequence,
// head): c[m,n] (+)= a[m,k] @ b[k,n]. A 2x4 register block does 8
// multiply-adds per 6 loads, where a row-times-matrix axpy does one per two
// loads and a store.
func GemmNN[T Float](c, a, b []T, m, k, n int, accumulate bool) {
	_, _, _ = c[m*n-1], a[m*k-1], b[k*n-1]
	i := 0
	for ; i+2 <= m; i += 2 {
		a0, a1 := a[i*k:(i+1)*k], a[(i+1)*k:(i+2)*k]
		c0, c1 := c[i*n:(i+1)*n], c[(i+1)*n:(i+2)*n]
		j := 0
		for ; j+4 <= n; j += 4 {
			var s00, s01, s02, s03, s10, s11, s12, s13 T
			off := j
			for p, x0 := range a0 {
				x1 := a1[p]
				r := (*[4]T)(b[off : off+4])
				off += n
				s00 += x0 * r[0]
				s01 += x0 * r[1]
				s02 += x0 * r[2]
				s03 += x0 * r[3]
				s10 += x1 * r[0]
				s11 += x1 * r[1]
				s12 += x1 * r[2]
				s13 += x1 * r[3]
			}
			d0, d1 := (*[4]T)(c0[j:j+4]), (*[4]T)(c1[j:j+4])
			if accumulate {
				d0[0], d0[1], d0[2], d0[3] = d0[0]+s00, d0[1]+s01, d0[2]+s02, d0[3]+s03
				d1[0], d1[1], d1[2], d1[3] = d1[0]+s10, d1[1]+s11, d1[2]+s12, d1[3]+s13
			} else {
				*d0, *d1 = [4]T{s00, s01, s02, s03}, [4]T{s10, s11, s12, s13}
			}
		}
		for ; j < n; j++ {
			gemmNNOne(c0, a0, b, n, j, accumulate)
			gemmNNOne(c1, a1, b, n, j, accumulate)
		}
	}
	for ; i < m; i++ {
		for j := 0; j < n; j++ {
			gemmNNOne(c[i*n:(i+1)*n], a[i*k:(i+1)*k], b, n, j, accumulate)
		}
	}
}

// gemmNNOne computes the single element c_row[j] = a_row . b[:, j].
func gemmNNOne[T Float](cRow, aRow, b []T, n, j int, accumulate bool) {
	var s T
	for p, x := range aRow {
		s += x * b[p*n+j]
	}
	if accumulate {
		s += cRow[j]
	}
	cRow[j] = s
}

// GemmNT is the serial c[m,n] = a[m,k] @ bt[n,k]^T, one tile of MatMulNT.
func GemmNT[T Float](c, a, bt []T, m, k, n int) {
	matmulTile(c, a, bt, k, n, 0, m, 0, n)
}
