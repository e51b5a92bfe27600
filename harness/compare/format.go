package compare

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Write prints the table: one line per backend and configuration, then the
// geometric mean and a legend, so the output explains itself when pasted
// into a review.
func (t *Table) Write(w io.Writer, threshold float64) error {
	fmt.Fprintf(w, "A: %s (%d results)\nB: %s (%d results)\n\n", t.A.Dir, len(t.A.Results), t.B.Dir, len(t.B.Results))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "configuration\tbackend\tmedian A\tmedian B\tB/A\t95% CI of B/A\tp\tn\tverdict")
	mixed := t.mixedDevices()
	for _, r := range t.Rows {
		name := r.Backend
		if mixed {
			name += " (" + r.Device + ")"
		}
		verdict := string(r.Verdict)
		if r.Verdict == Broken || r.Verdict == Fixed || r.Verdict == NoData {
			verdict += fmt.Sprintf(": A %s, B %s", orDash(string(r.StatusA)), orDash(string(r.StatusB)))
		}
		if r.Regression(threshold) {
			verdict += " (regression)"
		}
		ci, p, ratio := "-", "-", "-"
		if r.Ratio > 0 {
			ratio = fmtRatio(r.Ratio)
		}
		if r.HasCI {
			ci = fmtRatio(r.Lo) + " .. " + fmtRatio(r.Hi)
		}
		if r.HasP {
			p = fmtP(r.P)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d+%d\t%s\n", Label(r.Config), name,
			fmtMs(r.MedianA), fmtMs(r.MedianB), ratio, ci, p, r.NA, r.NB, verdict)
	}
	if t.GeomeanN > 0 {
		fmt.Fprintf(tw, "geomean (%d pairs)\t\t%s\t%s\t%s\n", t.GeomeanN, fmtMs(t.GeomeanA), fmtMs(t.GeomeanB), fmtRatio(t.GeomeanRatio))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nB/A = median B / median A: below 1 is faster. 95%% CI: Hodges-Lehmann interval of log B - log A\n"+
		"(inverts the Mann-Whitney U test). p: two-sided Mann-Whitney U; verdict faster/slower when p < %.2f, ~ otherwise.\n", Alpha)
	if da, db := devices(t.A), devices(t.B); da != db {
		fmt.Fprintf(w, "note: A ran on %s, B on %s: results on different device models never pair (each is \"only in\" its side).\n", da, db)
	}
	if t.A.Superseded+t.B.Superseded > 0 {
		fmt.Fprintf(w, "note: %d results in A and %d in B were superseded by newer results of the same backend and configuration.\n",
			t.A.Superseded, t.B.Superseded)
	}
	var warned []string
	for _, r := range t.Rows {
		for _, x := range r.Warnings {
			warned = append(warned, fmt.Sprintf("%s %s: %s", Label(r.Config), r.Backend, x))
		}
	}
	if len(warned) > 0 {
		fmt.Fprintf(w, "warnings:\n  %s\n", strings.Join(warned, "\n  "))
	}
	return nil
}

// mixedDevices says whether rows ran on more than one device model, so
// the backend column must say which.
func (t *Table) mixedDevices() bool {
	for _, r := range t.Rows {
		if r.Device != t.Rows[0].Device {
			return true
		}
	}
	return false
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

func fmtRatio(x float64) string { return fmt.Sprintf("%.3fx", x) }

// fmtMs keeps four significant digits in the unit that suits the value.
func fmtMs(ms float64) string {
	switch {
	case ms <= 0 || math.IsNaN(ms):
		return "-"
	case ms >= 1000:
		return fmt.Sprintf("%.4g s", ms/1000)
	case ms >= 1:
		return fmt.Sprintf("%.4g ms", ms)
	default:
		return fmt.Sprintf("%.4g µs", ms*1000)
	}
}

// devices lists the device models (labels) of a set's results.
func devices(s *Set) string {
	var out []string
	for _, r := range s.Results {
		if l := r.Device.Label(); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
