package problems

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/problem"
)

// Method is how one side of a score was timed: the L2 state at the start
// of each sample (cold or warm), the clock (the first word of env.timing),
// the untimed calls before the samples, and the precision convention. A
// speedup between two methods measures the methods as well as the kernels
// (on the H100 a cold sample of a small problem reads 7-11% above a warm
// one), so score names both and warns when they differ.
type Method struct {
	L2, Timer string
	Warmup    int
	Precision string
}

func (m Method) String() string {
	return fmt.Sprintf("L2 %s, timer %s, %d warmup calls, precision %s", m.L2, m.Timer, m.Warmup, m.Precision)
}

// KernelBenchTimer is the clock label of KernelBench's own method (the
// pytorch backend's timer under XBENCH_METHOD=kernelbench, and what a file
// of KernelBench's own was timed with).
const KernelBenchTimer = "kernelbench-events"

// KernelBenchMethod is how KernelBench's published baselines were timed,
// read from its repository at the commit that added
// results/timing/H100_Modal (6e6fca9, 2025-12-30): scripts/
// generate_baseline_time_modal.py calls timing.time_execution_with_cuda_event
// with 100 trials, which makes 3 warmup calls, then per trial synchronizes,
// writes a 256 MiB int64 buffer (clear_l2_cache: cold L2) without waiting for
// the write, records a start event, calls the model, records an end event
// and synchronizes; the first trial is dropped. Precision flags are left at
// PyTorch's defaults. An entry without an "l2" key is such a file.
var KernelBenchMethod = Method{L2: "cold", Timer: KernelBenchTimer, Warmup: 4, Precision: problem.PrecisionKernelBench}

// Unknown is the L2 state and timer of an entry that records no method and
// is not KernelBench's: a file xbench wrote before baselines recorded it.
const Unknown = "unknown"

// MethodOf is the method an entry records; for one that records none,
// KernelBench's when its times are KernelBench's (get_timing_stats rounds
// each to 3 significant digits), else Unknown (xbench wrote full floats
// before it recorded methods: results/timing/H100 is such a file).
func (e Entry) MethodOf() Method {
	if e.L2 != "" {
		return Method{L2: e.L2, Timer: e.Timer, Warmup: e.Warmup, Precision: e.Convention()}
	}
	for _, v := range []float64{e.Mean, e.Std, e.Min, e.Max} {
		if r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64); err != nil || r != v {
			return Method{L2: Unknown, Timer: Unknown, Precision: e.Convention()}
		}
	}
	m := KernelBenchMethod
	m.Precision = e.Convention()
	return m
}

// ResultMethod is how a problem result was timed.
func ResultMethod(r result.Result) Method {
	l2 := "warm"
	if r.Mode.ColdCache {
		l2 = "cold"
	}
	timer, _, _ := strings.Cut(r.Env.Timing, ":")
	return Method{L2: l2, Timer: strings.TrimSpace(timer), Warmup: r.Config.Warmup, Precision: problem.PrecisionOf(r.Config)}
}

// Methods lists the distinct methods of the baseline's entries and of the
// ok problem results, each with its count, and the ways they differ (""
// when both sides are one and the same method). Warmup alone is not a
// difference worth a warning: a problem's samples are steady long before
// either side's count.
func Methods(b Baseline, rs []result.Result) (base, res []string, differ string) {
	bm, rm := map[Method]int{}, map[Method]int{}
	for _, probs := range b {
		for _, e := range probs {
			bm[e.MethodOf()]++
		}
	}
	for _, r := range rs {
		if _, _, ok := problemOf(r); ok && r.Status == result.StatusOK {
			rm[ResultMethod(r)]++
		}
	}
	list := func(m map[Method]int) []string {
		var out []string
		for k, n := range m {
			out = append(out, fmt.Sprintf("%s (%d problems)", k, n))
		}
		slices.Sort(out)
		return out
	}
	var why []string
	for x := range bm {
		if x.L2 == Unknown {
			why = append(why, "the baseline does not record how it was timed")
			continue
		}
		for y := range rm {
			if x.L2 != y.L2 {
				why = append(why, fmt.Sprintf("L2 %s against %s", x.L2, y.L2))
			}
			if x.Timer != y.Timer {
				why = append(why, fmt.Sprintf("timer %s against %s", x.Timer, y.Timer))
			}
		}
	}
	slices.Sort(why)
	return list(bm), list(rm), strings.Join(slices.Compact(why), "; ")
}
