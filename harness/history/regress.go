package history

import "fmt"

// Regression is a series whose newest point sits on a step up.
type Regression struct {
	Series *Series
	Step   Step
	// FirstBad is the run where the slower level starts.
	FirstBad Run
}

func (r Regression) String() string {
	commit := r.FirstBad.Commit
	if commit == "" {
		commit = "(no commit recorded)"
	}
	return fmt.Sprintf("%s %s %s on %s, %s: %.1f%% slower (95%% CI %.1f%% to %.1f%%) since commit %.12s in %s",
		r.Series.Backend, r.Series.Workload, r.Series.Label, r.Series.Device, r.Series.Mode,
		100*(r.Step.Ratio-1), 100*(r.Step.Lo-1), 100*(r.Step.Hi-1), commit, r.FirstBad.Dir)
}

// Regressions lists the series whose newest run has an ok point on the
// level that the series' last step raised by more than frac (0.05 = 5%):
// a slowdown that is still there tonight. A series whose newest point is
// not ok, or whose last step went down, is not one.
func (h *History) Regressions(frac float64) []Regression {
	var out []Regression
	newest := len(h.Runs) - 1
	for _, s := range h.Series {
		if len(s.Steps) == 0 || newest < 0 || !s.Points[newest].OK() {
			continue
		}
		if last := s.Steps[len(s.Steps)-1]; last.Regression(frac) {
			out = append(out, Regression{Series: s, Step: last, FirstBad: h.Runs[last.FirstBad]})
		}
	}
	return out
}
