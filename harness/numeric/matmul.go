package numeric

// Dense matmuls take the "NT" form c[m,n] = a[m,k] @ bt[n,k]^T: both
// operands are read along k, contiguously, so a caller stores a weight
// matrix it applies often transposed ([out, in]) once.
// Tile sizes: a tile of mTile rows by nTile columns of c is one parallel work
// item; kBlock keeps the 2 rows of a and 4 rows of bt the micro-kernel
// streams inside L1, and a tile's panels inside L2.
const (
	mTile  = 32
	nTile  = 64
	kBlock = 256
)

// MatMulNT sets c[m,n] = a[m,k] @ bt[n,k]^T, using every core. Each element
// of c is owned by one tile and summed in a fixed order, so the result is
// bitwise reproducible.
func MatMulNT[T Float](c, a, bt []T, m, k, n int) {
	if len(a) < m*k || len(bt) < n*k || len(c) < m*n {
		panic("MatMulNT: slice shorter than its shape")
	}
	mt, nt := (m+mTile-1)/mTile, (n+nTile-1)/nTile
	ParallelFor(mt*nt, func(_, t int) {
		i0, j0 := (t/nt)*mTile, (t%nt)*nTile
		matmulTile(c, a, bt, k, n, i0, min(i0+mTile, m), j0, min(j0+nTile, n))
	})
}

// matmulTile computes rows [i0,i1) by columns [j0,j1) of c.
func matmulTile[T Float](c, a, bt []T, k, n, i0, i1, j0, j1 int) {
	for k0 := 0; k0 < k; k0 += kBlock {
		k1 := min(k0+kBlock, k)
		first := k0 == 0
		j := j0
		for ; j+4 <= j1; j += 4 {
			b0, b1, b2, b3 := bt[j*k+k0:j*k+k1], bt[(j+1)*k+k0:(j+1)*k+k1], bt[(j+2)*k+k0:(j+2)*k+k1], bt[(j+3)*k+k0:(j+3)*k+k1]
			i := i0
			for ; i+2 <= i1; i += 2 {
				a0, a1 := a[i*k+k0:i*k+k1], a[(i+1)*k+k0:(i+1)*k+k1]
				s := kernel2x4(a0, a1, b0, b1, b2, b3)
				store(c[i*n+j:i*n+j+4], s[0:4], first)
				store(c[(i+1)*n+j:(i+1)*n+j+4], s[4:8], first)
			}
			for ; i < i1; i++ {
				a0 := a[i*k+k0 : i*k+k1]
				s := [4]T{Dot(a0, b0), Dot(a0, b1), Dot(a0, b2), Dot(a0, b3)}
				store(c[i*n+j:i*n+j+4], s[:], first)
			}
		}
		for ; j < j1; j++ {
			b0 := bt[j*k+k0 : j*k+k1]
			for i := i0; i < i1; i++ {
				s := [1]T{Dot(a[i*k+k0:i*k+k1], b0)}
				store(c[i*n+j:i*n+j+1], s[:], first)
			}
		}
	}
}

// store writes (first k block) or accumulates a partial sum into c.
func store[T Float](c, s []T, first bool) {
	if first {
		copy(c, s)
		return
	}
	for i := range s {
		c[i] += s[i]
	}
}

// kernel2x4 returns the 8 dot products of rows a0, a1 with b0..b3. Eight
// independent accumulators hide the add latency. (Loading one b value at a
// time spills less but runs slower: the loads no longer overlap.)
func kernel2x4[T Float](a0, a1, b0, b1, b2, b3 []T) [8]T {
	n := len(a0)
	a1, b0, b1, b2, b3 = a1[:n], b0[:n], b1[:n], b2[:n], b3[:n]
	var c00, c01, c02, c03, c10, c11, c12, c13 T
	for p := 0; p < n; p++ {
		x0, x1 := a0[p], a1[p]
		y0, y1, y2, y3 := b0[p], b1[p], b2[p], b3[p]
		c00 += x0 * y0
		c01 += x0 * y1
		c02 += x0 * y2
		c03 += x0 * y3
		c10 += x1 * y0
		c11 += x1 * y1
		c12 += x1 * y2
		c13 += x1 * y3
	}
	return [8]T{c00, c01, c02, c03, c10, c11, c12, c13}
}

// Dot is a plain inner product of equal-length vectors.
func Dot[T Float](a, b []T) T {
	b = b[:len(a)]
	var s T
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Axpy sets y += alpha * x.
func Axpy[T Float](y []T, alpha T, x []T) {
	x = x[:len(y)]
	for i := range y {
		y[i] += alpha * x[i]
	}
}

// Transpose returns the [cols, rows] transpose of a row-major [rows, cols] matrix.
func Transpose[T Float](a []T, rows, cols int) []T {
	out := make([]T, rows*cols)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			out[j*rows+i] = a[i*cols+j]
		}
	}
	return out
}

// TransposeInto writes the [cols, rows] transpose of src [rows, cols] into
// dst, blocks of 32 rows in parallel.
func TransposeInto[T Float](dst, src []T, rows, cols int) {
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
