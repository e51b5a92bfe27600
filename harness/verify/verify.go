// Package verify compares a backend's outputs with the float64 reference.
package verify

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/xbench/xbench/harness/tensorfile"
)

// Verdicts of one row.
const (
	Pass        = "pass"
	Fail        = "FAIL"
	Unsupported = "unsupported"
	Error       = "error"
)

// Row is one backend's agreement with the reference.
type Row struct {
	Backend   string  `json:"backend"`
	Device    string  `json:"device"`
	Dtype     string  `json:"dtype"`
	Verdict   string  `json:"verdict"`
	RelL2     float64 `json:"rel_l2"`
	MaxAbs    float64 `json:"max_abs"`
	Tolerance float64 `json:"tolerance"`
	Message   string  `json:"message,omitempty"`
}

// Compare returns ||got-want|| / ||want|| and max |got-want|. NaN anywhere
// gives NaN, which never passes.
func Compare(got, want []float64) (relL2, maxAbs float64) {
	var num, den float64
	for i := range want {
		d := got[i] - want[i]
		num += d * d
		den += want[i] * want[i]
		if math.IsNaN(d) {
			return math.NaN(), math.NaN()
		}
		maxAbs = math.Max(maxAbs, math.Abs(d))
	}
	if den == 0 {
		return math.Sqrt(num), maxAbs
	}
	return math.Sqrt(num / den), maxAbs
}

// Check loads the named tensor from a backend's output file and grades it
// against row.Tolerance (the workload's, set by the caller).
func Check(row Row, outPath string, name string, want tensorfile.Tensor) Row {
	return CheckAll(row, outPath, []string{name}, map[string]tensorfile.Tensor{name: want})
}

// CheckAll grades several named tensors of one output file, each against
// its reference in want and the one row.Tolerance. The row carries the
// worst tensor's errors (a NaN is the worst); with more than one tensor its
// message names the worst and lists every tensor's relative L2 error, so a
// failing gradient is told apart from a failing output.
func CheckAll(row Row, outPath string, names []string, want map[string]tensorfile.Tensor) Row {
	m, err := tensorfile.Read(outPath)
	if err != nil {
		row.Verdict, row.Message = Error, err.Error()
		return row
	}
	var notes []string
	worst := ""
	for _, name := range names {
		rel, maxAbs, bad := compareOne(m, outPath, name, want[name])
		if bad.Verdict != "" {
			row.Verdict, row.Message = bad.Verdict, bad.Message
			return row
		}
		notes = append(notes, fmt.Sprintf("%s %.2e", name, rel))
		if worst == "" || math.IsNaN(rel) || rel > row.RelL2 {
			worst, row.RelL2, row.MaxAbs = name, rel, maxAbs
			if math.IsNaN(rel) {
				break
			}
		}
	}
	row.Verdict = Pass
	if !(row.RelL2 <= row.Tolerance) {
		row.Verdict = Fail
	}
	if len(names) > 1 {
		row.Message = fmt.Sprintf("worst %s; %s", worst, strings.Join(notes, ", "))
	}
	return row
}

// compareOne grades one tensor; a non-empty verdict in bad ends the check
// (a missing tensor is an error, a wrong shape a failure).
func compareOne(m map[string]tensorfile.Tensor, outPath, name string, want tensorfile.Tensor) (relL2, maxAbs float64, bad Row) {
	got, ok := m[name]
	if !ok {
		return 0, 0, Row{Verdict: Error, Message: fmt.Sprintf("%s has no tensor %q", outPath, name)}
	}
	if !slices.Equal(got.Shape, want.Shape) {
		return 0, 0, Row{Verdict: Fail, Message: fmt.Sprintf("tensor %q has shape %v, want %v", name, got.Shape, want.Shape)}
	}
	g, err := got.Float64s()
	if err != nil {
		return 0, 0, Row{Verdict: Error, Message: err.Error()}
	}
	w, err := want.Float64s()
	if err != nil {
		return 0, 0, Row{Verdict: Error, Message: err.Error()}
	}
	relL2, maxAbs = Compare(g, w)
	return relL2, maxAbs, Row{}
}
