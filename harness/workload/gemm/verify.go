package gemm

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
)

// Fixtures are the inputs "a" and "b" as F32 tensors in their stored shapes
// (see Shapes), no weights. Values are drawn uniform in [-1, 1) as float32
// and rounded to the dtype when it stores fewer bits (bfloat16, float16,
// float8_e4m3), so every backend multiplies exactly the numbers the
// reference does and only its own arithmetic differs.
//
// Values are drawn in the logical order of op(A) [batch, m, k] and op(B)
// [batch, k, n] and then stored in the layout, so the four layouts of one
// shape multiply the same matrices and must give the same C.
func (Workload) Fixtures(cfg result.Config, seed int64) (workload.Fixtures, error) {
	d, err := lookupDtype(cfg.Dtype())
	if err != nil {
		return workload.Fixtures{}, err
	}
	b, m, n, k := dims(cfg)
	aShape, bShape, _ := Shapes(cfg)
	layout := cfg.Get("layout")
	return workload.Fixtures{
		Weights: map[string]tensorfile.Tensor{},
		Inputs: map[string]tensorfile.Tensor{
			"a": randomMatrix(workload.Stream(seed, "a"), d.round, aShape, b, m, k, layout[0] == 't'),
			"b": randomMatrix(workload.Stream(seed, "b"), d.round, bShape, b, k, n, layout[1] == 't'),
		},
	}, nil
}

// randomMatrix draws a logical [batch, rows, cols] matrix row by row and
// writes it straight into F32 bytes, transposed when stored 't', so a large
// fixture is not held twice.
func randomMatrix(r *rand.Rand, round func(float32) float32, shape []int, batch, rows, cols int, transposed bool) tensorfile.Tensor {
	data := make([]byte, 4*batch*rows*cols)
	for bi := 0; bi < batch; bi++ {
		base := bi * rows * cols
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				v := 2*r.Float32() - 1 // Float32 is in [0, 1) on a 2^-24 grid, so v is exact
				if round != nil {
					v = round(v)
				}
				at := base + i*cols + j
				if transposed {
					at = base + j*rows + i
				}
				binary.LittleEndian.PutUint32(data[4*at:], math.Float32bits(v))
			}
		}
	}
	return tensorfile.Tensor{DType: tensorfile.DTypeF32, Shape: slices.Clone(shape), Data: data}
}

// Output is the tensor every backend's Export writes: C as F32 [batch, m, n].
func (Workload) Output(result.Config) string { return "c" }

// Reference is C = op(A) @ op(B) in float64 from the fixture inputs, as an
// F64 [batch, m, n] tensor. The inputs are exact in float64 and each output
// element is summed in one fixed order, so it is deterministic; its own
// rounding (2^-53 per step) is far below every tolerance.
func (Workload) Reference(cfg result.Config, fx workload.Fixtures) (tensorfile.Tensor, error) {
	b, m, n, k := dims(cfg)
	aShape, bShape, cShape := Shapes(cfg)
	a, err := input(fx, "a", aShape)
	if err != nil {
		return tensorfile.Tensor{}, err
	}
	bv, err := input(fx, "b", bShape)
	if err != nil {
		return tensorfile.Tensor{}, err
	}
	// The loop below walks op(A) and op(B) along their rows; a 't' operand
	// would be walked with a stride, so lay it out logically once.
	layout := cfg.Get("layout")
	if layout[0] == 't' {
		a = transposeBatches(a, b, k, m)
	}
	if layout[1] == 't' {
		bv = transposeBatches(bv, b, n, k)
	}
	c := make([]float64, b*m*n)
	workload.Parallel(b*m, func(row int) {
		bi := row / m
		out := c[row*n : (row+1)*n]
		aRow := a[row*k : (row+1)*k]
		for p, aip := range aRow {
			bRow := bv[bi*k*n+p*n : bi*k*n+(p+1)*n]
			for j, x := range bRow {
				// The conversion forbids fusing into an FMA, so the sum
				// is the same on every architecture.
				out[j] += float64(aip * x)
			}
		}
	})
	return tensorfile.F64(cShape, c), nil
}

// input decodes one fixture tensor, checking it has the shape cfg implies.
func input(fx workload.Fixtures, name string, shape []int) ([]float64, error) {
	t, ok := fx.Inputs[name]
	if !ok {
		return nil, fmt.Errorf("gemm reference: fixtures have no input %q", name)
	}
	if !slices.Equal(t.Shape, shape) {
		return nil, fmt.Errorf("gemm reference: input %q has shape %v, the configuration needs %v", name, t.Shape, shape)
	}
	return t.Float64s()
}

// transposeBatches turns each [rows, cols] matrix of a batch into [cols, rows].
func transposeBatches(v []float64, batch, rows, cols int) []float64 {
	out := make([]float64, len(v))
	for bi := 0; bi < batch; bi++ {
		src, dst := v[bi*rows*cols:], out[bi*rows*cols:]
		for r := 0; r < rows; r++ {
			for c := 0; c < cols; c++ {
				dst[c*rows+r] = src[r*cols+c]
			}
		}
	}
	return out
}

// Tolerance is the largest relative L2 error of C accepted for cfg:
//
//	base(dtype) · clamp(sqrt(k/256), 1, 5)
//
// Two errors add up. Rounding C to the output dtype (and for tf32 rounding
// the inputs to TF32's 10-bit mantissa) is a fixed relative error that does
// not shrink with k, so the tolerance never falls below the base. Float32
// accumulation error grows like sqrt(k) for terms of random sign, so above
// k = 256 the tolerance grows with it, up to 5× the base (k = 6400): a
// wrong kernel must not hide behind a large k. docs/workloads/gemm.md gives
// the numbers.
func (Workload) Tolerance(cfg result.Config) float64 {
	d, err := lookupDtype(cfg.Dtype())
	if err != nil {
		return 0 // nothing passes an unknown dtype
	}
	scale := math.Sqrt(float64(cfg.Int("k")) / 256)
	return d.tolBase * min(max(scale, 1), 5)
}
