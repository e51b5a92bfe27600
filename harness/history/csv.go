package history

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// CSVHeader are WriteCSV's columns. step_ratio (with its interval) is set on
// the first point of every detected step.
var CSVHeader = []string{"workload", "backend", "config", "label", "device", "mode", "run", "commit", "date",
	"date_source", "dir", "status", "median_ms", "ci95_low_ms", "ci95_high_ms", "n", "step_ratio", "step_low",
	"step_high", "message"}

// WriteCSV writes one row per point of every series, in series and run order.
func (h *History) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("history csv: %w", err)
	}
	num := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', 8, 64)
	}
	for _, s := range h.Series {
		steps := map[int]Step{}
		for _, st := range s.Steps {
			steps[st.FirstBad] = st
		}
		for _, p := range s.Points {
			run := h.Runs[p.Run]
			ratio, lo, hi := "", "", ""
			if st, ok := steps[p.Run]; ok {
				ratio, lo, hi = num(st.Ratio), num(st.Lo), num(st.Hi)
			}
			n := ""
			if p.N > 0 {
				n = strconv.Itoa(p.N)
			}
			row := []string{s.Workload, s.Backend, s.Key.Config, s.Label, s.Device, s.Mode, strconv.Itoa(p.Run),
				run.Commit, run.Date.UTC().Format(time.RFC3339), run.DateSource, run.Dir, string(p.Status),
				num(p.Median), num(p.Lo), num(p.Hi), n, ratio, lo, hi, p.Message}
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("history csv: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("history csv: %w", err)
	}
	return nil
}
