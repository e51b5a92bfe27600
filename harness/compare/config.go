package compare

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/workload"
)

// ConfigKey identifies a configuration regardless of backend (the part of
// store.Key after the backend), so two backends or two runs line up.
func ConfigKey(c result.Config) string {
	return strings.TrimPrefix(store.Key("", c), "__")
}

// Label is a configuration in a few words, for tables and chart axes: the
// workload's own label (workload.Label is the one definition).
func Label(c result.Config) string { return workload.Label(c) }

// CompareConfigs orders configurations the way a reader scans a sweep:
// workload, then each parameter in the workload's declared order (enum
// values in their declared order, integers by value), then the phase in the
// workload's order.
func CompareConfigs(a, b result.Config) int {
	if c := cmp.Compare(a.Workload, b.Workload); c != 0 {
		return c
	}
	w, err := workload.Lookup(a.Workload)
	if err != nil {
		return cmp.Compare(workload.Key(a), workload.Key(b))
	}
	for _, p := range w.Params() {
		if c := compareValue(p, a.Get(p.Name), b.Get(p.Name)); c != 0 {
			return c
		}
	}
	return cmp.Compare(slices.Index(w.Phases(), a.Phase), slices.Index(w.Phases(), b.Phase))
}

func compareValue(p workload.Param, x, y string) int {
	switch p.Kind {
	case workload.Int:
		nx, ex := strconv.ParseInt(x, 10, 64)
		ny, ey := strconv.ParseInt(y, 10, 64)
		if ex == nil && ey == nil {
			return cmp.Compare(nx, ny)
		}
	case workload.Enum:
		ix, iy := slices.Index(p.Allowed, x), slices.Index(p.Allowed, y)
		if ix >= 0 && iy >= 0 {
			return cmp.Compare(ix, iy)
		}
	}
	return cmp.Compare(x, y)
}
