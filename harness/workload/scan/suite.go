package scan

import (
	"fmt"
	"math/bits"
	"strconv"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// The grid suite's axes: flash-semicrf's memory-analysis benchmark grid
// (K 4..24, C 3..12), with T from 256 to 4096.
var (
	gridT = []int{256, 512, 1024, 2048, 4096}
	gridK = []int{4, 8, 12, 16, 20, 24}
	gridC = []int{3, 6, 9, 12}
)

func (Workload) SuiteHelp() string {
	return "grid (T 256-4096 x K 4-24 x C 3-12: 120 shapes; batch, semiring and dtype from the flags), " +
		"or a CSV file of T,K,C[,batch] rows"
}

// Suite expands --shapes SPEC: grid, or a CSV file.
func (Workload) Suite(spec string) ([]map[string]string, error) {
	if spec == "grid" {
		var out []map[string]string
		for _, t := range gridT {
			for _, k := range gridK {
				for _, c := range gridC {
					out = append(out, map[string]string{"T": strconv.Itoa(t), "K": strconv.Itoa(k), "C": strconv.Itoa(c)})
				}
			}
		}
		return out, nil
	}
	return workload.CSVSuite(Workload{}, spec, []string{"T", "K", "C", "batch"}, 3, "grid")
}

// Bucket groups configurations by T and K·C, each rounded up to a power of
// two (flash-semicrf's benchmarks sample their grids along these two
// axes), within one batch, semiring, dtype and phase: "T1024 KC64 b4 log
// float32 forward". A backend that pads T to its power of two (jax, and
// the compile variant of pytorch) compiles once per T bucket and K, C.
func (Workload) Bucket(cfg result.Config) string {
	s := ShapeOf(cfg)
	return fmt.Sprintf("T%d KC%d b%d %s %s %s", pow2(s.T), pow2(s.K*s.C), s.Batch, cfg.Get("semiring"), cfg.Dtype(), cfg.Phase)
}

// pow2 is the least power of two >= n (n >= 1).
func pow2(n int) int { return 1 << bits.Len(uint(n-1)) }
