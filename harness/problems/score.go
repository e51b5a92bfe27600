package problems

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/xbench/xbench/harness/report"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/problem"
)

// CurveSteps are the thresholds of the printed fast_p curve: 0 to 4 by 0.25.
var CurveSteps = func() []float64 {
	var out []float64
	for p := 0.0; p <= 4; p += 0.25 {
		out = append(out, p)
	}
	return out
}()

// ReviewSpeedup is the speedup above which score names a problem for a
// reader to look at (KernelBench's evaluator flags the same 10x): a
// speedup that large is more often a cheat the gate did not catch than a
// kernel.
const ReviewSpeedup = 10.0

// LevelScore is one backend on one level of a baseline.
type LevelScore struct {
	Backend, Level string
	Total          int              // problems of the level in the baseline
	Outcomes       []report.Outcome // one per baseline problem, in file name order
	Review         []string         // "<file>: <speedup>x" for each speedup above ReviewSpeedup
}

// FastP is the share of the level's problems that are correct with a
// speedup above p (report.Exceeds).
func (s LevelScore) FastP(p float64) float64 { return report.FastPOf(s.Outcomes, s.Total, p) }

// MaxSpeedup is the largest speedup of a correct problem (0 if none): the
// curve is 0 from there on.
func (s LevelScore) MaxSpeedup() float64 {
	m := 0.0
	for _, o := range s.Outcomes {
		if o.Correct && o.Speedup > m {
			m = o.Speedup
		}
	}
	return m
}

// Score pairs each backend's problem results with the baseline by level
// and file name. Correct is status ok (for candidates: the gate passed);
// the speedup is the baseline mean over the result's mean (KernelBench's
// rule, both means from the same statistics). A baseline problem a backend
// has no ok result for counts as incorrect. Baseline backends themselves
// are scored too when present (eager against eager is fast_1 = 0).
func Score(b Baseline, rs []result.Result) []LevelScore {
	type key struct{ backend, level, name string }
	got := map[key]result.Result{}
	backends := map[string]bool{}
	for _, r := range rs {
		level, name, ok := problemOf(r)
		if !ok {
			continue
		}
		backends[r.Backend] = true
		k := key{r.Backend, level, name}
		if old, ok := got[k]; !ok || old.Status != result.StatusOK {
			got[k] = r
		}
	}
	var out []LevelScore
	for _, be := range sortedKeys(backends) {
		for _, lv := range sortedKeys(b) {
			s := LevelScore{Backend: be, Level: lv, Total: len(b[lv])}
			for _, name := range sortedKeys(b[lv]) {
				o := report.Outcome{}
				if r, ok := got[key{be, lv, name}]; ok && r.Status == result.StatusOK && r.Stats != nil && r.Stats.MeanMs > 0 {
					o = report.Outcome{Correct: true, Speedup: b[lv][name].Mean / r.Stats.MeanMs}
					if o.Speedup > ReviewSpeedup {
						s.Review = append(s.Review, fmt.Sprintf("%s: %.3gx", name, o.Speedup))
					}
				}
				s.Outcomes = append(s.Outcomes, o)
			}
			out = append(out, s)
		}
	}
	return out
}

// problemOf is the baseline level key and file name of a problem result
// ("" when its folder is gone, which matches no baseline key); ok is false
// for results of other workloads.
func problemOf(r result.Result) (level, name string, ok bool) {
	if r.Config.Workload != problem.Name {
		return "", "", false
	}
	lv, id := r.Config.Int("level"), r.Config.Int("problem")
	return LevelKey(lv), problem.NameOf(r.Config.Get("problems"), lv, id), true
}

// Hardware says where a baseline was timed against where the results it
// scores ran, over the problems they share. Kinds lists the distinct pairs
// whose device kinds differ (a CPU run against a GPU baseline: its
// speedups compare machines, not kernels); Names those of one kind on
// differently named hardware (an H100 SXM against an H100 PCIe baseline).
type Hardware struct{ Kinds, Names []string }

// CheckHardware compares each result with the baseline entry of its
// problem. KernelBench writes "cuda:0" for every GPU (ROCm torch too), so
// the kinds compared are cpu and gpu.
func CheckHardware(b Baseline, rs []result.Result) Hardware {
	kind := func(s string) string {
		if s == "cpu" {
			return "cpu"
		}
		return "gpu"
	}
	kinds, names := map[string]bool{}, map[string]bool{}
	for _, r := range rs {
		level, name, ok := problemOf(r)
		if !ok || r.Status != result.StatusOK {
			continue
		}
		e, ok := b[level][name]
		if !ok {
			continue
		}
		pair := fmt.Sprintf("baseline on %q (%s), results on %q (%s)", e.Hardware, e.Device, r.Device.Name, r.Device.Kind)
		switch {
		case kind(strings.SplitN(e.Device, ":", 2)[0]) != kind(r.Device.Kind):
			kinds[pair] = true
		case e.Hardware != r.Device.Name:
			names[pair] = true
		}
	}
	return Hardware{Kinds: sortedKeys(kinds), Names: sortedKeys(names)}
}

// CheckPrecision lists, for each precision convention of the problem
// results among rs that is not the baseline's, how many results have it: a
// speedup against a baseline of another convention measures the
// convention (TF32 convolutions against IEEE ones), not the kernel, so
// score refuses them.
func CheckPrecision(b Baseline, rs []result.Result) []string {
	want := b.Convention()
	count := map[string]int{}
	for _, r := range rs {
		if r.Config.Workload != problem.Name {
			continue
		}
		if p := problem.PrecisionOf(r.Config); p != want {
			count[p]++
		}
	}
	var out []string
	for _, p := range sortedKeys(count) {
		out = append(out, fmt.Sprintf("%d results timed under precision %s, the baseline under %s", count[p], p, want))
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	// level2 before level10, file 2_ before 10_
	sort.Slice(out, func(i, j int) bool { return naturalLess(out[i], out[j]) })
	return out
}

// naturalLess orders strings with their digit runs compared as numbers.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da != "" && db != "" {
			na, nb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// WriteScores prints, per backend and level, fast_0, fast_1, fast_2 and
// the curve.
func WriteScores(w io.Writer, baselinePath string, scores []LevelScore) {
	fmt.Fprintf(w, "fast_p against %s (correct and speedup > p, over the baseline's problems; speedup = baseline mean / mean)\n", baselinePath)
	fmt.Fprintf(w, "%-32s %-8s %6s %8s %8s %8s %12s\n", "backend", "level", "total", "fast_0", "fast_1", "fast_2", "max speedup")
	for _, s := range scores {
		fmt.Fprintf(w, "%-32s %-8s %6d %8.3f %8.3f %8.3f %12.3g\n", s.Backend, s.Level, s.Total, s.FastP(0), s.FastP(1), s.FastP(2), s.MaxSpeedup())
	}
	for _, s := range scores {
		for _, r := range s.Review {
			fmt.Fprintf(w, "review %s %s %s: above %gx, look at the candidate before trusting it\n", s.Backend, s.Level, r, ReviewSpeedup)
		}
	}
	for _, s := range scores {
		var parts []string
		for _, p := range CurveSteps {
			parts = append(parts, fmt.Sprintf("%g:%.3f", p, s.FastP(p)))
		}
		fmt.Fprintf(w, "curve %s %s  %s\n", s.Backend, s.Level, strings.Join(parts, " "))
	}
}
