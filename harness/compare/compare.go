package compare

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/stats"
)

// Verdict is what a comparison concludes for one backend and configuration.
type Verdict string

const (
	Faster   Verdict = "faster"
	Slower   Verdict = "slower"
	NoChange Verdict = "~" // no significant change
	// Broken: the backend produced samples in A and none in B (oom,
	// failed, ...); it counts as a regression.
	Broken Verdict = "broken"
	// Fixed: no samples in A, samples in B.
	Fixed Verdict = "fixed"
	// NoData: neither side has samples (both unsupported, say).
	NoData Verdict = "no data"
	OnlyA  Verdict = "only in A"
	OnlyB  Verdict = "only in B"
)

// Row is one backend on one configuration, A against B.
type Row struct {
	Backend          string
	Device           string // result.Device.Label: the model, so an H100 and an H200 are two rows
	Config           result.Config
	StatusA, StatusB result.Status // "" when that side has no result
	NA, NB           int
	MedianA, MedianB float64 // ms
	Ratio            float64 // MedianB / MedianA
	Lo, Hi           float64 // 95% interval of the ratio, when HasCI
	HasCI            bool
	P                float64 // two-sided Mann-Whitney U, when HasP
	HasP             bool
	Verdict          Verdict
	Warnings         []string
}

// Table is a whole comparison.
type Table struct {
	A, B *Set
	Rows []Row
	// Geomean is over the rows with samples on both sides: the geometric
	// means of the medians and of the ratios.
	GeomeanA, GeomeanB, GeomeanRatio float64
	GeomeanN                         int
}

// Compare pairs every backend and configuration present on either side.
func Compare(a, b *Set) *Table {
	keys := map[string]bool{}
	for k := range a.Results {
		keys[k] = true
	}
	for k := range b.Results {
		keys[k] = true
	}
	t := &Table{A: a, B: b}
	var medA, medB, ratios []float64
	for k := range keys {
		ra, inA := a.Results[k]
		rb, inB := b.Results[k]
		row := compareOne(ra, inA, rb, inB)
		t.Rows = append(t.Rows, row)
		if row.Ratio > 0 && !math.IsInf(row.Ratio, 0) {
			medA, medB, ratios = append(medA, row.MedianA), append(medB, row.MedianB), append(ratios, row.Ratio)
		}
	}
	slices.SortFunc(t.Rows, func(x, y Row) int {
		if c := CompareConfigs(x.Config, y.Config); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(x.Backend, y.Backend), strings.Compare(x.Device, y.Device))
	})
	t.GeomeanA, t.GeomeanB, t.GeomeanRatio, t.GeomeanN = Geomean(medA), Geomean(medB), Geomean(ratios), len(ratios)
	return t
}

func hasSamples(r result.Result) bool { return r.Status == result.StatusOK && len(r.SamplesMs) > 0 }

func compareOne(ra result.Result, inA bool, rb result.Result, inB bool) Row {
	row := Row{}
	if inA {
		row.Backend, row.Device, row.Config, row.StatusA, row.NA = ra.Backend, ra.Device.Label(), ra.Config, ra.Status, len(ra.SamplesMs)
	}
	if inB {
		row.Backend, row.Device, row.Config, row.StatusB, row.NB = rb.Backend, rb.Device.Label(), rb.Config, rb.Status, len(rb.SamplesMs)
	}
	okA, okB := inA && hasSamples(ra), inB && hasSamples(rb)
	if okA {
		row.MedianA = median(ra.SamplesMs)
	}
	if okB {
		row.MedianB = median(rb.SamplesMs)
	}
	switch {
	case !inB:
		row.Verdict = OnlyA
		return row
	case !inA:
		row.Verdict = OnlyB
		return row
	case okA && !okB:
		row.Verdict = Broken
		return row
	case !okA && okB:
		row.Verdict = Fixed
		return row
	case !okA && !okB:
		row.Verdict = NoData
		return row
	}
	row.Ratio = row.MedianB / row.MedianA
	row.Lo, row.Hi, row.HasCI = RatioCI(ra.SamplesMs, rb.SamplesMs)
	p, warns := PValue(ra.SamplesMs, rb.SamplesMs)
	row.P, row.HasP = p, true
	for _, w := range warns {
		row.Warnings = append(row.Warnings, w.Error())
	}
	switch {
	case p >= Alpha:
		row.Verdict = NoChange
	case row.Ratio > 1:
		row.Verdict = Slower
	case row.Ratio < 1:
		row.Verdict = Faster
	default:
		// Significant yet equal medians: the distributions differ
		// elsewhere, not in the centre this table reports.
		row.Verdict = NoChange
	}
	return row
}

// Regression is a row that fails a CI gate: significantly slower by more
// than threshold (0.05 = 5%), or broken.
func (r Row) Regression(threshold float64) bool {
	return r.Verdict == Broken || r.Verdict == Slower && r.Ratio > 1+threshold
}

// Regressions lists the rows that fail the gate.
func (t *Table) Regressions(threshold float64) []Row {
	var out []Row
	for _, r := range t.Rows {
		if r.Regression(threshold) {
			out = append(out, r)
		}
	}
	return out
}

func median(xs []float64) float64 {
	s, err := stats.Summarize(xs)
	if err != nil {
		return math.NaN()
	}
	return s.MedianMs
}
