package report

import (
	"slices"
	"strings"

	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/result"
)

// A results folder is read recursively, so it may hold results of more
// than one kind of device (a CPU run beside GPU runs). Times on different
// kinds are not comparable: every ratio is taken against the baseline on
// the same kind, and every chart is drawn once per kind (kindViews).

// kinds lists the device kinds of the results, sorted.
func (r *Report) kinds() []string {
	var out []string
	for _, res := range r.Results {
		if !slices.Contains(out, res.Device.Kind) {
			out = append(out, res.Device.Kind)
		}
	}
	slices.Sort(out)
	return out
}

// baselineFor is the series of the baseline backend on a device of kind,
// "" when the baseline backend has no results there.
func (r *Report) baselineFor(kind string) string {
	if !r.multiDevice {
		return r.Baseline
	}
	name := strings.TrimSuffix(r.Baseline, " ("+r.kindOf[r.Baseline]+")") + " (" + kind + ")"
	if slices.Contains(r.Backends, name) {
		return name
	}
	return ""
}

// kindViews is the report split by device kind: itself when the folder
// holds one kind, else one view per kind holding only that kind's results,
// series and configurations, with the baseline backend's series of that
// kind as baseline.
func (r *Report) kindViews() []*Report {
	if !r.multiDevice {
		return []*Report{r}
	}
	var views []*Report
	for _, kind := range r.kinds() {
		v := *r
		v.Results, v.Backends, v.Configs = nil, nil, nil
		v.byConfig = map[string]map[string]result.Result{}
		v.Baseline = r.baselineFor(kind)
		v.viewKind = kind
		for _, res := range r.Results {
			if res.Device.Kind != kind {
				continue
			}
			v.Results = append(v.Results, res)
			k := compare.ConfigKey(res.Config)
			if v.byConfig[k] == nil {
				v.byConfig[k] = map[string]result.Result{}
			}
			v.byConfig[k][r.Series(res)] = res
		}
		for _, b := range r.Backends {
			if r.kindOf[b] == kind {
				v.Backends = append(v.Backends, b)
			}
		}
		for _, c := range r.Configs {
			if _, ok := v.byConfig[compare.ConfigKey(c)]; ok {
				v.Configs = append(v.Configs, c)
			}
		}
		views = append(views, &v)
	}
	return views
}
