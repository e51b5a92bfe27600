// Package gemm is the GEMM workload of docs/workloads/gemm.md: one (batched)
// dense matrix product C = op(A) @ op(B) in one dtype. This package is the
// spec as code: parameters, the limits between them, the cost model, the
// verification fixtures and float64 reference, and the shape suites.
package gemm

import (
	"fmt"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// Workload is the GEMM workload. It holds no state: everything it needs is
// in the configuration.
type Workload struct{}

var (
	_ workload.Workload   = Workload{}
	_ workload.Suiter     = Workload{}
	_ workload.ColdCacher = Workload{}
)

// Limits of the parameters. Dimensions stop at 2^20 and batch at 2^16 so
// every product of them fits an int64 long before Check looks at it;
// MaxElements (2^34, 64 GiB of float32) bounds each of A, B and C, beyond
// any device this harness runs on.
const (
	MaxDim      = 1 << 20
	MaxBatch    = 1 << 16
	MaxElements = int64(1) << 34
)

// Layouts in the order the parameter lists them. Letter 1 is A, letter 2 is
// B; 'n' is stored as is, 't' stored transposed.
var layouts = []string{"nn", "nt", "tn", "tt"}

func (Workload) Name() string { return Name }

// Name is the workload's name.
const Name = "gemm"

func (Workload) Description() string {
	return "dense matrix product C = op(A) @ op(B), batched, in one dtype"
}

// Params are built on each call, so no caller can change another's slices.
// The four sizes are size axes: when a product runs out of memory, every
// product at least as large in each of them, with the same layout and
// dtype, would too, so a sweep skips those.
func (Workload) Params() []workload.Param {
	dim := func(name, help string) workload.Param {
		return workload.Param{Name: name, Kind: workload.Int, Default: "512", Min: 1, Max: MaxDim, Help: help, SizeAxis: true, Scale: true}
	}
	length := func(p workload.Param) workload.Param { p.Length = true; return p }
	return []workload.Param{
		dim("m", "rows of op(A) and of C"),
		dim("n", "columns of op(B) and of C"),
		length(dim("k", "the reduced dimension: columns of op(A), rows of op(B)")),
		{Name: "batch", Kind: workload.Int, Default: "1", Min: 1, Max: MaxBatch,
			Help: "independent products of the same shape in one call (1 = plain matmul)", SizeAxis: true, Scale: true},
		{Name: "layout", Kind: workload.Enum, Default: "nn", Allowed: append([]string(nil), layouts...),
			Help: "storage of A then B: n = as is, t = transposed"},
		{Name: "dtype", Kind: workload.Enum, Default: "float32", Allowed: DtypeNames(), Aliases: dtypeAliases(),
			Help: "float32 (no TF32), tf32 (TF32 products), bfloat16, float16, float8_e4m3 (bfloat16 output); float32 accumulation"},
	}
}

func (Workload) Phases() []string { return []string{workload.PhaseForward} }

// dims reads the four sizes of a resolved configuration.
func dims(cfg result.Config) (batch, m, n, k int) {
	return cfg.Int("batch"), cfg.Int("m"), cfg.Int("n"), cfg.Int("k")
}

// Check refuses a configuration whose work does not fit an int64 or whose
// A, B or C would hold more than MaxElements elements. The per-parameter
// bounds are already enforced; this is the rule between them.
func (Workload) Check(cfg result.Config) error {
	b, m, n, k := dims(cfg)
	if _, ok := workload.MulInt64(b, m, n, k); !ok {
		return &workload.ValueError{Flag: "--batch --m --n --k", Value: fmt.Sprintf("%d %d %d %d", b, m, n, k),
			Allowed: "batch·m·n·k below 2^63"}
	}
	buffers := []struct {
		name, flags, product string
		x, y                 int
	}{
		{"A", "--batch --m --k", "batch·m·k", m, k},
		{"B", "--batch --k --n", "batch·k·n", k, n},
		{"C", "--batch --m --n", "batch·m·n", m, n},
	}
	for _, buf := range buffers {
		e, ok := workload.MulInt64(b, buf.x, buf.y)
		if !ok || e > MaxElements {
			return &workload.ValueError{Flag: buf.flags, Value: fmt.Sprintf("%d %d %d", b, buf.x, buf.y),
				Allowed: fmt.Sprintf("%s holds %s = %s elements; at most %d (2^34) per matrix", buf.name, buf.product, workload.CountText(e, ok), MaxElements)}
		}
	}
	return nil
}

// Label is "MxNxK[ bB] layout dtype": layout and dtype are always shown, so
// a label alone says what was multiplied; batch only when it is not 1.
func (Workload) Label(cfg result.Config) string {
	b, m, n, k := dims(cfg)
	parts := []string{fmt.Sprintf("%dx%dx%d", m, n, k)}
	if b > 1 {
		parts = append(parts, fmt.Sprintf("b%d", b))
	}
	parts = append(parts, cfg.Get("layout"), cfg.Dtype())
	return strings.Join(parts, " ")
}

// Shapes are the stored shapes of A and B for cfg's layout, and C's shape,
// all batch first and row-major: what the fixture files and "c" hold.
func Shapes(cfg result.Config) (a, b, c []int) {
	bt, m, n, k := dims(cfg)
	a, b = []int{bt, m, k}, []int{bt, k, n}
	layout := cfg.Get("layout")
	if len(layout) == 2 && layout[0] == 't' {
		a = []int{bt, k, m}
	}
	if len(layout) == 2 && layout[1] == 't' {
		b = []int{bt, n, k}
	}
	return a, b, []int{bt, m, n}
}

// SmallDefaults implements workload.Smaller: a verify on the CPU (Triton in
// its interpreter too) uses a shape that is not a multiple of any tile, so
// edge masks are exercised, and small enough to take seconds.
func (Workload) SmallDefaults() map[string]string {
	return map[string]string{"m": "96", "n": "80", "k": "72"}
}

// ColdCacheByDefault: a GEMM is timed cold unless --cold-cache=false. On
// the H100 a warm L2 made burnstyle-hip's bf16 GEMMs up to 1024^3 1.3x
// faster than cold (results/h100-coldcache); from 2048^3 up the two agree
// within a few percent, so cold costs the large shapes nothing.
func (Workload) ColdCacheByDefault() bool { return true }
