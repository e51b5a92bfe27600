package report

import (
	"slices"
	"strings"

	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/result"
)

// A results folder is read recursively, so it may hold results of more
// than one device model (a CPU run beside GPU runs, an H100 folder beside
// an H200 one). Times on different models are not comparable: every ratio
// is taken against the baseline on the same model, and the page gives
// each model a section of its own (deviceViews), its charts, fast_p and
// tables.

// models lists the device models (result.Device.Model) of the results,
// sorted.
func (r *Report) models() []string {
	var out []string
	for _, res := range r.Results {
		if m := res.Device.Model(); !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// baselineFor is the series of the baseline backend on a device of model,
// "" when the baseline backend has no results there.
func (r *Report) baselineFor(model string) string {
	if !r.multiDevice {
		return r.Baseline
	}
	backendName := strings.TrimSuffix(r.Baseline, " ("+r.labelOf[r.modelOf[r.Baseline]]+")")
	for _, b := range r.Backends {
		if r.modelOf[b] == model && b == backendName+" ("+r.labelOf[model]+")" {
			return b
		}
	}
	return ""
}

// deviceViews is the report split by device model: itself when the folder
// holds one model, else one view per model holding only that model's
// results and configurations, with the baseline backend on that model as
// baseline. A view is a report of one model: its series are the backends'
// names alone, as its section's heading names the device.
func (r *Report) deviceViews() []*Report {
	if !r.multiDevice {
		return []*Report{r}
	}
	var views []*Report
	for _, model := range r.models() {
		v := *r
		v.Results, v.Backends, v.Configs = nil, nil, nil
		v.byConfig = map[string]map[string]result.Result{}
		v.multiDevice = false
		v.Baseline = strings.TrimSuffix(r.baselineFor(model), " ("+r.labelOf[model]+")")
		v.viewDevice = r.labelOf[model]
		v.modelOf = map[string]string{}
		for _, res := range r.Results {
			if res.Device.Model() != model {
				continue
			}
			v.Results = append(v.Results, res)
			k := compare.ConfigKey(res.Config)
			if v.byConfig[k] == nil {
				v.byConfig[k] = map[string]result.Result{}
			}
			v.byConfig[k][res.Backend] = res
			if _, seen := v.modelOf[res.Backend]; !seen {
				v.modelOf[res.Backend] = model
				v.Backends = append(v.Backends, res.Backend)
			}
		}
		slices.Sort(v.Backends)
		for _, c := range r.Configs {
			if _, ok := v.byConfig[compare.ConfigKey(c)]; ok {
				v.Configs = append(v.Configs, c)
			}
		}
		views = append(views, &v)
	}
	return views
}

// slug is a device label as part of a file name: lower case, runs of
// anything but letters and digits as one "-".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
