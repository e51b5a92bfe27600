package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// ConfigKey identifies a configuration regardless of backend (the part of
// store.Key after the backend), so two backends or two runs line up.
func ConfigKey(c result.Config) string {
	return strings.TrimPrefix(store.Key("", c), "__")
}

// Label is a configuration in a few words, for tables and chart axes.
func Label(c result.Config) string {
	s := fmt.Sprintf("%s %s %s %s b%d L%d K%d", c.ModelSize, c.TTTType, c.Phase(), c.Dtype, c.Batch, c.SeqLen, c.MiniBatch)
	if c.Backbone != "" && c.Backbone != "transformer" {
		s += " " + c.Backbone
	}
	return s
}

// CompareConfigs orders configurations the way a reader scans a sweep:
// model size (smallest first), inner model, phase, dtype, then the numbers.
func CompareConfigs(a, b result.Config) int {
	return cmp.Or(
		cmp.Compare(sizeRank(a.ModelSize), sizeRank(b.ModelSize)),
		cmp.Compare(a.ModelSize, b.ModelSize),
		cmp.Compare(a.Backbone, b.Backbone),
		cmp.Compare(a.TTTType, b.TTTType),
		cmp.Compare(phaseRank(a.Phase()), phaseRank(b.Phase())),
		cmp.Compare(a.Dtype, b.Dtype),
		cmp.Compare(a.Batch, b.Batch),
		cmp.Compare(a.SeqLen, b.SeqLen),
		cmp.Compare(a.MiniBatch, b.MiniBatch),
	)
}

func sizeRank(name string) int {
	if s, err := ttt.LookupSize(name); err == nil {
		return slices.Index(ttt.SizeNames(), s.Name)
	}
	return len(ttt.SizeNames())
}

func phaseRank(p string) int {
	return slices.Index([]string{"forward", "backward", "inner_only"}, p)
}
