package report

import (
	"maps"
	"slices"

	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/result"
)

// distinctLabels names each configuration (by compare.ConfigKey) for the
// tables and the charts' axes: its compare.Label, and where configurations
// of the report share that label, each parameter whose values differ among
// them ("level2/1 precision=strict-ieee"), so no two rows read alike. A
// workload's label leaves out what rarely varies (KernelBench's precision,
// TTT's backbone); when a folder does vary it, the reader must see it.
func distinctLabels(cfgs []result.Config) map[string]string {
	byLabel := map[string][]result.Config{}
	for _, c := range cfgs {
		l := compare.Label(c)
		byLabel[l] = append(byLabel[l], c)
	}
	out := map[string]string{}
	for l, group := range byLabel {
		differ := differingFields(group)
		for _, c := range group {
			label := l
			for _, f := range differ {
				label += " " + f + "=" + field(c, f)
			}
			out[compare.ConfigKey(c)] = label
		}
	}
	return out
}

// differingFields are the fields (workload, phase and each parameter, in
// that order, parameters by name) whose values are not all the same in
// cfgs.
func differingFields(cfgs []result.Config) []string {
	if len(cfgs) < 2 {
		return nil
	}
	names := map[string]bool{}
	for _, c := range cfgs {
		for k := range c.Params {
			names[k] = true
		}
	}
	var out []string
	for _, f := range append([]string{"workload", "phase"}, slices.Sorted(maps.Keys(names))...) {
		for _, c := range cfgs[1:] {
			if field(c, f) != field(cfgs[0], f) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

func field(c result.Config, name string) string {
	switch name {
	case "workload":
		return c.Workload
	case "phase":
		return c.Phase
	}
	return c.Get(name)
}

// label is c's name in this report's tables and charts (distinctLabels).
func (r *Report) label(c result.Config) string {
	if l, ok := r.labels[compare.ConfigKey(c)]; ok {
		return l
	}
	return compare.Label(c)
}
