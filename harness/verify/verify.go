// Package verify compares a backend's outputs with the float64 reference.
package verify

import (
	"fmt"
	"math"
	"slices"

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
	m, err := tensorfile.Read(outPath)
	if err != nil {
		row.Verdict, row.Message = Error, err.Error()
		return row
	}
	got, ok := m[name]
	if !ok {
		row.Verdict, row.Message = Error, fmt.Sprintf("%s has no tensor %q", outPath, name)
		return row
	}
	if !slices.Equal(got.Shape, want.Shape) {
		row.Verdict, row.Message = Fail, fmt.Sprintf("tensor %q has shape %v, want %v", name, got.Shape, want.Shape)
		return row
	}
	g, err := got.Float64s()
	if err != nil {
		row.Verdict, row.Message = Error, err.Error()
		return row
	}
	w, err := want.Float64s()
	if err != nil {
		row.Verdict, row.Message = Error, err.Error()
		return row
	}
	row.RelL2, row.MaxAbs = Compare(g, w)
	row.Verdict = Pass
	if !(row.RelL2 <= row.Tolerance) {
		row.Verdict = Fail
	}
	return row
}
