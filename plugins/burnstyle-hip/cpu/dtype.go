package cpu

import (
	"fmt"
	"slices"
	"strings"
)

// dtypeRounding is the one table of the dtypes the CPU path computes at:
// each one's rounding of a float32 value, nil where the value is kept
// (float32; tf32, whose definition allows computing it as float32). The
// gemm, attention and scan paths all read it through Rounding.
var dtypeRounding = map[string]func(float32) float32{
	"float32":  nil,
	"tf32":     nil,
	"bfloat16": RoundBF16,
	"float16":  RoundF16,
}

// Rounding is dtype's rounding (nil: float32 as it is), or an error naming
// the dtypes the CPU computes at.
func Rounding(dtype string) (func(float32) float32, error) {
	round, ok := dtypeRounding[dtype]
	if !ok {
		var allowed []string
		for d := range dtypeRounding {
			allowed = append(allowed, d)
		}
		slices.Sort(allowed)
		return nil, fmt.Errorf("unknown dtype %q (allowed: %s)", dtype, strings.Join(allowed, ", "))
	}
	return round, nil
}

// Rounded returns a copy of x rounded by round (x itself when round is nil).
func Rounded(round func(float32) float32, x []float32) []float32 {
	if round == nil {
		return x
	}
	out := make([]float32, len(x))
	for i, e := range x {
		out[i] = round(e)
	}
	return out
}
