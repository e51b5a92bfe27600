package workload

import (
	"fmt"
	"math/bits"
)

// MulInt64 multiplies non-negative ints, reporting overflow past int64:
// a workload's Check forms products of sizes (elements of a tensor, work of
// a call) that must be bounded before anything allocates them.
func MulInt64(xs ...int) (int64, bool) {
	p := uint64(1)
	for _, x := range xs {
		if x < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(p, uint64(x))
		if hi != 0 || lo > 1<<63-1 {
			return 0, false
		}
		p = lo
	}
	return int64(p), true
}

// CountText is a MulInt64 result for an error message: the count, or
// "more than 2^63" when the product overflowed.
func CountText(n int64, ok bool) string {
	if !ok {
		return "more than 2^63"
	}
	return fmt.Sprint(n)
}
