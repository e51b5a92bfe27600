package history

// Step detection: penalised weighted least squares over the series' ok
// points (optimal partitioning, the family asv's step detection belongs
// to), on log medians so that a step is a ratio.
//
// Each point's variance is its own (from the 95% interval of its median,
// which harness/stats computed from the raw samples) plus the run-to-run
// variance τ² that the intervals do not cover (other processes, clocks,
// placement), estimated robustly from successive differences so that the
// steps themselves barely move it. The segmentation minimises
//
//	Σ_segments Σ_i (y_i − ȳ_seg)² / v_i  +  β · (segments − 1)
//
// exactly, by dynamic programming over every split. Under no change the
// weighted residuals are χ²(1) per point, so β = Penalty · ln n is a BIC-like
// price per step, raised above BIC's 2·ln n to keep the false-alarm rate low
// across many series and every candidate split. A step is then reported
// only when the 95% interval of its size excludes no change and the size
// is at least MinStep: a level change must be both surprising under the
// noise and large enough to matter.

import (
	"math"
	"slices"
)

// DetectOptions tune Detect; zero fields take the defaults.
type DetectOptions struct {
	Penalty float64 // β = Penalty · ln(n); default 4
	MinStep float64 // smallest relative step reported (0.01 = 1%); default 0.01
	// MinSigma floors each point's relative standard error (default 0.002),
	// so a point with a zero-width interval cannot dominate.
	MinSigma float64
	// MinRuns is the fewest ok points a level must hold on each side of a
	// step (default 3): one or two nights off are noise until more agree,
	// so a step is never declared from two runs.
	MinRuns int
}

func (o DetectOptions) withDefaults() DetectOptions {
	if o.Penalty <= 0 {
		o.Penalty = 4
	}
	if o.MinStep <= 0 {
		o.MinStep = 0.01
	}
	if o.MinSigma <= 0 {
		o.MinSigma = 0.002
	}
	if o.MinRuns <= 0 {
		o.MinRuns = 3
	}
	return o
}

// Step is a change of level between two runs.
type Step struct {
	// FirstBad is the run of the first point of the new level; LastGood
	// the run of the last ok point before it (runs between them have no
	// ok point, so the change happened somewhere in (LastGood, FirstBad]).
	FirstBad, LastGood int
	// Ratio is the new level over the old (above 1: slower), with its 95%
	// interval; Before and After are the levels (ms, weighted geometric means).
	Ratio, Lo, Hi float64
	Before, After float64
}

// Regression says whether the step made the series slower by more than frac.
func (s Step) Regression(frac float64) bool { return s.Ratio > 1+frac }

// Detect finds the steps of a series' ok points, oldest first.
func Detect(pts []Point, opt DetectOptions) []Step {
	opt = opt.withDefaults()
	var y, v []float64
	var runs []int
	for _, p := range pts {
		if !p.OK() || p.Median <= 0 {
			continue
		}
		y = append(y, math.Log(p.Median))
		s := opt.MinSigma
		if p.Lo > 0 && p.Hi >= p.Lo {
			s = math.Max(s, (math.Log(p.Hi)-math.Log(p.Lo))/(2*1.96))
		}
		v = append(v, s*s)
		runs = append(runs, p.Run)
	}
	n := len(y)
	if n < 2 {
		return nil
	}
	// An interval from ten samples is itself noisy: a point whose interval
	// came out narrower than the series' typical one would outweigh the
	// rest, so none counts as tighter than the median point.
	floor := median(v)
	for i := range v {
		v[i] = math.Max(v[i], floor)
	}
	tau2 := runToRun(y, v)
	for i := range v {
		v[i] += tau2
	}
	cuts := mergeShort(partition(y, v, opt.Penalty*math.Log(float64(n))), y, v, opt.MinRuns)
	var steps []Step
	for k := 1; k < len(cuts)-1; k++ {
		a, b, c := cuts[k-1], cuts[k], cuts[k+1]
		m1, w1 := wmean(y[a:b], v[a:b])
		m2, w2 := wmean(y[b:c], v[b:c])
		d, se := m2-m1, math.Sqrt(1/w1+1/w2)
		st := Step{FirstBad: runs[b], LastGood: runs[b-1], Ratio: math.Exp(d),
			Lo: math.Exp(d - 1.96*se), Hi: math.Exp(d + 1.96*se), Before: math.Exp(m1), After: math.Exp(m2)}
		if (st.Lo > 1 || st.Hi < 1) && math.Abs(st.Ratio-1) >= opt.MinStep {
			steps = append(steps, st)
		}
	}
	return steps
}

// runToRun estimates the variance between runs beyond each point's own:
// half the squared robust spread (MAD) of successive differences, less the
// mean variance the intervals already account for, never below zero.
func runToRun(y, v []float64) float64 {
	if len(y) < 3 {
		return 0
	}
	d := make([]float64, len(y)-1)
	for i := range d {
		d[i] = y[i+1] - y[i]
	}
	med := median(d)
	for i := range d {
		d[i] = math.Abs(d[i] - med)
	}
	mad := 1.4826 * median(d)
	mean := 0.0
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	return math.Max(0, mad*mad/2-mean)
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func wmean(y, v []float64) (mean, weight float64) {
	for i := range y {
		mean += y[i] / v[i]
		weight += 1 / v[i]
	}
	return mean / weight, weight
}

// partition returns the segment boundaries [0, c1, ..., n] minimising the
// weighted squared error plus beta per extra segment (optimal partitioning,
// O(n²) with prefix sums).
func partition(y, v []float64, beta float64) []int {
	n := len(y)
	sw, swy, swy2 := make([]float64, n+1), make([]float64, n+1), make([]float64, n+1)
	for i := range y {
		w := 1 / v[i]
		sw[i+1], swy[i+1], swy2[i+1] = sw[i]+w, swy[i]+w*y[i], swy2[i]+w*y[i]*y[i]
	}
	cost := func(a, b int) float64 { // weighted SSE of y[a:b] about its weighted mean
		w, wy := sw[b]-sw[a], swy[b]-swy[a]
		return math.Max(0, swy2[b]-swy2[a]-wy*wy/w)
	}
	best, prev := make([]float64, n+1), make([]int, n+1)
	best[0] = -beta
	for b := 1; b <= n; b++ {
		best[b] = math.Inf(1)
		for a := 0; a < b; a++ {
			if c := best[a] + beta + cost(a, b); c < best[b] {
				best[b], prev[b] = c, a
			}
		}
	}
	cuts := []int{n}
	for b := n; b > 0; b = prev[b] {
		cuts = append(cuts, prev[b])
	}
	slices.Reverse(cuts)
	return cuts
}

// mergeShort joins every segment of fewer than minRuns points to the
// neighbour whose level is closer, so a step needs minRuns points on each
// side: a new level seen on one or two nights is not declared yet, and an
// outlier between two levels does not hide the step between them.
func mergeShort(cuts []int, y, v []float64, minRuns int) []int {
	for {
		short := -1
		for k := 0; k+1 < len(cuts); k++ {
			if cuts[k+1]-cuts[k] < minRuns && len(cuts) > 2 {
				short = k
				break
			}
		}
		if short < 0 {
			return cuts
		}
		m, _ := wmean(y[cuts[short]:cuts[short+1]], v[cuts[short]:cuts[short+1]])
		drop := short // the cut before the segment: merge with the previous one
		if short == 0 {
			drop = 1
		} else if short+2 < len(cuts) {
			prev, _ := wmean(y[cuts[short-1]:cuts[short]], v[cuts[short-1]:cuts[short]])
			next, _ := wmean(y[cuts[short+1]:cuts[short+2]], v[cuts[short+1]:cuts[short+2]])
			if math.Abs(next-m) < math.Abs(prev-m) {
				drop = short + 1
			}
		}
		cuts = slices.Delete(cuts, drop, drop+1)
	}
}
