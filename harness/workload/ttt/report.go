package ttt

// TTT's own report sections: median time against sequence length and
// throughput (tokens/s) against model size, the two axes a TTT sweep runs
// over, one panel per combination of the other fields.

import (
	"fmt"
	"math"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/view"
)

var _ workload.Reporter = Workload{}

// ReportSections are the two charts, first among the report's charts.
func (Workload) ReportSections(v view.Results) []view.Section {
	var out []view.Section
	for _, c := range []*view.Chart{timeVsSeqLen(v), throughputVsSize(v)} {
		if c != nil {
			out = append(out, view.Section{Place: view.Lead, Chart: c})
		}
	}
	return out
}

// facets groups the configurations by their typed view with the swept
// fields cleared.
func facets(cfgs []result.Config, clear func(*Config)) ([]Config, map[Config][]result.Config) {
	var keys []Config
	groups := map[Config][]result.Config{}
	for _, c := range cfgs {
		k := From(c)
		k.Warmup, k.Repeats = 0, 0
		clear(&k)
		if _, seen := groups[k]; !seen {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	return keys, groups
}

// facetLabel names a panel by the fields its configurations share.
func facetLabel(c Config, swept string) string {
	s := ""
	if swept != "size" {
		s = c.ModelSize + " "
	}
	s += fmt.Sprintf("%s %s %s b%d K%d", c.TTTType, c.Phase(), c.Dtype, c.Batch, c.MiniBatch)
	if swept == "size" {
		s += fmt.Sprintf(" L%d", c.SeqLen)
	}
	if c.Backbone != "" && c.Backbone != "transformer" {
		s += " " + c.Backbone
	}
	return s
}

func timeVsSeqLen(v view.Results) *view.Chart {
	keys, groups := facets(v.Configs(), func(c *Config) { c.SeqLen = 0 })
	var panels []view.Panel
	for _, k := range keys {
		cfgs := groups[k]
		if len(cfgs) < 2 {
			continue
		}
		p := view.Panel{Title: facetLabel(k, "seq"), XLabel: "sequence length (tokens)", YLabel: "median time (ms)", LogX: true, LogY: true}
		for _, c := range cfgs {
			p.XTicks = append(p.XTicks, float64(From(c).SeqLen))
		}
		for _, b := range v.Backends() {
			s := view.Series{Name: b, Marker: true}
			for _, c := range cfgs {
				s.X, s.Y, s.Configs = append(s.X, float64(From(c).SeqLen)), append(s.Y, v.Median(b, c)), append(s.Configs, c)
				lo, hi := v.Interval(b, c)
				s.Lo, s.Hi = append(s.Lo, lo), append(s.Hi, hi)
			}
			p.Lines = append(p.Lines, s)
		}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return nil
	}
	return &view.Chart{Name: "time-vs-seq-len", Title: "Time against sequence length", Panels: panels,
		Caption: "Median time per call against sequence length, log-log, the band its 95% interval; a missing point did not finish (see the feasibility map)."}
}

func throughputVsSize(v view.Results) *view.Chart {
	keys, groups := facets(v.Configs(), func(c *Config) { c.ModelSize, c.SeqLen = "", 0 })
	var panels []view.Panel
	for _, k := range keys {
		// One sequence length per panel: the one with the most finished
		// runs (ties: the longest), so sizes are compared like for like.
		count := map[int]int{}
		sizes := map[int]map[string]bool{}
		for _, rc := range groups[k] {
			c := From(rc)
			if sizes[c.SeqLen] == nil {
				sizes[c.SeqLen] = map[string]bool{}
			}
			sizes[c.SeqLen][c.ModelSize] = true
			for _, b := range v.Backends() {
				if !math.IsNaN(v.Median(b, rc)) {
					count[c.SeqLen]++
				}
			}
		}
		best := 0
		for l, n := range count {
			if len(sizes[l]) >= 2 && (best == 0 || n > count[best] || n == count[best] && l > best) {
				best = l
			}
		}
		if best == 0 {
			continue
		}
		var cfgs []result.Config
		for _, c := range groups[k] {
			if From(c).SeqLen == best {
				cfgs = append(cfgs, c)
			}
		}
		params := func(rc result.Config) float64 {
			c := From(rc)
			s, _ := LookupSize(c.ModelSize)
			return float64(NumParams(s, c.TTTType, c.MiniBatch, c.Backbone)) / 1e6
		}
		k.SeqLen = best
		p := view.Panel{Title: facetLabel(k, "size"), XLabel: "model size (million parameters)", YLabel: "tokens/s", LogX: true, LogY: true}
		for _, c := range cfgs {
			p.XTicks, p.XTickLabels = append(p.XTicks, params(c)), append(p.XTickLabels, From(c).ModelSize)
		}
		for _, b := range v.Backends() {
			s := view.Series{Name: b, Marker: true}
			for _, c := range cfgs {
				tps, lo, hi := math.NaN(), math.NaN(), math.NaN()
				if res, ok := v.Result(b, c); ok && res.Status == result.StatusOK {
					tps = res.Throughput
					if tlo, thi := v.Interval(b, c); res.Stats != nil {
						// rate ∝ 1/time: the slow end of the time is the low rate
						lo, hi = tps*res.Stats.MedianMs/thi, tps*res.Stats.MedianMs/tlo
					}
				}
				s.X, s.Y, s.Configs = append(s.X, params(c)), append(s.Y, tps), append(s.Configs, c)
				s.Lo, s.Hi = append(s.Lo, lo), append(s.Hi, hi)
			}
			p.Lines = append(p.Lines, s)
		}
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return nil
	}
	return &view.Chart{Name: "throughput-vs-size", Title: "Throughput against model size", Panels: panels,
		Caption: "Throughput (tokens per second at the median) against model size, at one sequence length per panel; the band is its 95% interval."}
}
