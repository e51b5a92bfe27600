package report

import (
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/verify"
)

// FastPThresholds are the speedups fast_p is reported at.
var FastPThresholds = []float64{0, 1, 1.5, 2}

// FastP is one backend's fast_p: for each threshold p, the share of all
// configurations of the sweep on which the backend is correct and its
// speedup over the baseline on the same device kind (baseline median / its median) is above p.
// Correct means status ok and a verify verdict of pass, nothing less: a
// folder without verify records has no correct result, and the page says
// so. fast_0 is therefore the share that is correct; a configuration the
// baseline did not finish counts only toward fast_0.
type FastP struct {
	Backend string
	Counts  []int // per threshold
	Total   int   // configurations in the sweep
	// Why the others are not correct, so "0% correct" is never read as
	// "0% right": Incorrect failed verification, NotVerified finished ok
	// but no verify record covers it, NotFinished did not finish (oom,
	// failed, unsupported, ...) or was not run. NotTimed counts correct
	// results whose time is not a performance number: they count toward
	// fast_0 only.
	Incorrect, NotVerified, NotFinished, NotTimed int
}

// Share is Counts[i] / Total.
func (f FastP) Share(i int) float64 {
	if f.Total == 0 {
		return 0
	}
	return float64(f.Counts[i]) / float64(f.Total)
}

// FastP computes fast_p for every backend (series), each over the
// configurations of its own device model.
func (r *Report) FastP() []FastP {
	if r.multiDevice && r.viewDevice == "" {
		var out []FastP
		for _, v := range r.deviceViews() {
			for _, f := range v.FastP() {
				f.Backend += " (" + v.viewDevice + ")" // the folder's series name
				out = append(out, f)
			}
		}
		return out
	}
	tables := r.Tables()
	var out []FastP
	for _, b := range r.Backends {
		f := FastP{Backend: b, Counts: make([]int, len(FastPThresholds)), Total: len(tables)}
		baseline := r.baselineFor(r.modelOf[b])
		for _, t := range tables {
			var row, base *Row
			for i := range t.Rows {
				if t.Rows[i].Backend == b {
					row = &t.Rows[i]
				}
				if t.Rows[i].Backend == baseline {
					base = &t.Rows[i]
				}
			}
			verdict := VerdictNotFinished
			if row != nil {
				verdict = row.Verdict()
			}
			switch verdict {
			case VerdictNotFinished:
				f.NotFinished++
			case VerdictNotVerified:
				f.NotVerified++
			case verify.Pass:
				if row.NotTimed {
					f.NotTimed++
				}
			default:
				f.Incorrect++
			}
			if row == nil {
				continue
			}
			o := Outcome{Correct: row.Correct}
			if base != nil && base.Status == result.StatusOK && row.MedianMs > 0 && !row.NotTimed && !base.NotTimed {
				o.Speedup = base.MedianMs / row.MedianMs
			}
			for i, p := range FastPThresholds {
				if Exceeds(o, p) {
					f.Counts[i]++
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// Outcome is one configuration (problem) of a backend, as fast_p sees it:
// correct or not, and its speedup over the baseline (0 when unknown).
type Outcome struct {
	Correct bool
	Speedup float64
}

// Exceeds is the one fast_p rule: correct, and for p > 0 a speedup above
// p. fast_0 is therefore the share correct, whether or not the baseline
// has a time.
func Exceeds(o Outcome, p float64) bool {
	return o.Correct && (p == 0 || o.Speedup > p)
}

// FastPOf is the share of total that exceeds p (0 for no total).
func FastPOf(outcomes []Outcome, total int, p float64) float64 {
	if total == 0 {
		return 0
	}
	n := 0
	for _, o := range outcomes {
		if Exceeds(o, p) {
			n++
		}
	}
	return float64(n) / float64(total)
}
