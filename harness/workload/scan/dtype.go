package scan

import (
	"math"

	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
)

// dtype is everything the workload knows of one --dtype value.
type dtype struct {
	name  string
	bytes int
	// tolForward bounds out for log and max; tolEntropy out for entropy
	// (logZ minus an expectation of about the same size: the difference
	// loses digits); tolBackward every tensor of backward and both. Each
	// holds at T <= 128 and grows with T (see Tolerance).
	tolForward, tolEntropy, tolBackward float64
	// tensor packs float64 values in the storage type (rounding them).
	tensor func(shape []int, v []float64) tensorfile.Tensor
}

var dtypes = []dtype{
	// float32 gradients at T = 1024, K = 24, C = 12 (H100 and CPU): 1.1e-3
	// for pytorch, triton in its interpreter and burnstyle-hip, 2.7e-3 for
	// triton on the H100 (its exp is the hardware's approximation), 8e-5
	// for jax; 5e-4 grows to 4e-3 there.
	{name: "float32", bytes: 4, tolForward: 2e-5, tolEntropy: 1e-4, tolBackward: 5e-4, tensor: f32},
	{name: "float64", bytes: 8, tolForward: 1e-10, tolEntropy: 1e-9, tolBackward: 1e-8, tensor: tensorfile.F64},
}

func f32(shape []int, v []float64) tensorfile.Tensor {
	w := make([]float32, len(v))
	for i, x := range v {
		w[i] = float32(x)
	}
	return tensorfile.F32(shape, w)
}

// round is x as the dtype stores it, so the reference starts from exactly
// the numbers every backend reads.
func (d dtype) round(x float64) float64 {
	if d.bytes == 4 {
		return float64(float32(x))
	}
	return x
}

// DtypeNames lists the --dtype values in declaration order.
func DtypeNames() []string { return workload.RowNames(dtypes, dtypeName) }

func lookupDtype(name string) (dtype, error) {
	return workload.LookupRow("scan dtype", dtypes, dtypeName, name)
}

func dtypeName(d dtype) string { return d.name }

// growth is how a tolerance widens with T: float32 alphas grow like T (the
// log partition sums T positions' scores), so their absolute error grows
// like T·eps and a gradient, exp(alpha + beta - logZ), inherits it as a
// relative error. Capped at 50x, so a wrong kernel still fails.
func growth(t int) float64 { return math.Min(math.Max(float64(t)/128, 1), 50) }
