package workload

import (
	"slices"

	"github.com/xbench/xbench/harness/result"
)

// CostOf is the cost model of cfg's workload.
func CostOf(cfg result.Config) (Cost, error) {
	w, err := Lookup(cfg.Workload)
	if err != nil {
		return Cost{}, err
	}
	return w.Cost(cfg)
}

// ThroughputOf is the headline rate of cfg at a median time (zero for an
// unknown workload).
func ThroughputOf(cfg result.Config, medianMs float64) Throughput {
	w, err := Lookup(cfg.Workload)
	if err != nil {
		return Throughput{}
	}
	return w.Throughput(cfg, medianMs)
}

// RankOf is the size rank of cfg (0 for an unknown workload).
func RankOf(cfg result.Config) float64 {
	w, err := Lookup(cfg.Workload)
	if err != nil {
		return 0
	}
	return w.Rank(cfg)
}

// ParamColumns lists the parameter names of several configurations, each
// workload's in its declared order, for tables and CSV columns.
func ParamColumns(cfgs []result.Config) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cfgs {
		for _, k := range orderedKeys(c) {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// phaseSize orders phases by the work of one call.
var phaseSize = []string{PhaseInnerOnly, PhaseForward, PhaseBackward, PhaseBoth}

// AtLeastAsLarge reports whether big needs at least the memory and time of
// small: same workload, the same value of every parameter that is not a
// size axis, no size axis smaller, and no smaller phase. It is a partial
// order on purpose: 350m at 512 tokens is not "larger" than 125m at 2048
// tokens, so an out-of-memory at the second says nothing of the first.
func AtLeastAsLarge(big, small result.Config) bool {
	if big.Workload != small.Workload || slices.Index(phaseSize, big.Phase) < slices.Index(phaseSize, small.Phase) {
		return false
	}
	w, err := Lookup(big.Workload)
	if err != nil {
		return false
	}
	for _, p := range w.Params() {
		b, s := big.Get(p.Name), small.Get(p.Name)
		switch {
		case !p.SizeAxis:
			if b != s {
				return false
			}
		case p.Kind == Enum:
			if slices.Index(p.Allowed, b) < slices.Index(p.Allowed, s) {
				return false
			}
		case p.Kind == Int:
			if big.Int(p.Name) < small.Int(p.Name) {
				return false
			}
		}
	}
	return true
}
