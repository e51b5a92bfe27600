package result

import (
	"strconv"
	"strings"
)

// Model is the one definition of "the same device" for every view that
// lines results up (report, history, compare, export): kind, model name
// and count. Two results are comparable only when their Models are equal;
// an H100 and an H200 are both kind "cuda" but never one series. A result
// whose backend did not name its device (an unsupported phase answered
// before it started) has only its kind; see AdoptModel.
func (d Device) Model() string {
	if d.Name == "" {
		return d.Kind
	}
	s := d.Kind + ":" + d.Name
	if d.Count > 1 {
		s += " x" + strconv.Itoa(d.Count)
	}
	return s
}

// Label is the device in a few words for titles and series names: the
// model name (and count when above one), "cpu <name>" for a host CPU, the
// kind alone when the model is unknown.
func (d Device) Label() string {
	if d.Name == "" {
		return d.Kind
	}
	s := d.Name
	if d.Kind == "cpu" && !strings.HasPrefix(strings.ToLower(s), "cpu") {
		s = "cpu " + s
	}
	if d.Count > 1 {
		s += " x" + strconv.Itoa(d.Count)
	}
	return s
}

// AdoptModel gives every result that names only its device kind the model
// of the one named device of that kind among rs, so a folder measured on
// one H100 keeps an unsupported cell (whose backend never opened the
// device) beside the H100's results instead of in a section of its own.
// When rs holds several models of that kind the result stays unnamed:
// which of them it ran on is unknown.
func AdoptModel(rs []Result) {
	named := map[string]Device{}
	ambiguous := map[string]bool{}
	for _, r := range rs {
		if r.Device.Name == "" {
			continue
		}
		if d, ok := named[r.Device.Kind]; ok && d.Model() != r.Device.Model() {
			ambiguous[r.Device.Kind] = true
		}
		named[r.Device.Kind] = r.Device
	}
	for i, r := range rs {
		if d, ok := named[r.Device.Kind]; ok && r.Device.Name == "" && !ambiguous[r.Device.Kind] {
			rs[i].Device.Name, rs[i].Device.Count = d.Name, d.Count
			if rs[i].Device.Driver == "" {
				rs[i].Device.Driver = d.Driver
			}
		}
	}
}

// NotAPerformanceNumber is the phrase a backend puts in its timer's
// description or a warning when its time measures no real kernel (the
// Triton interpreter on a CPU, an emulator): such a result checks
// correctness only.
const NotAPerformanceNumber = "not a performance number"

// IsPerformance says whether r's time may enter a performance chart, a
// ratio or a score: false when its timing or a warning says it is not a
// performance number.
func (r Result) IsPerformance() bool {
	if strings.Contains(r.Env.Timing, NotAPerformanceNumber) {
		return false
	}
	for _, w := range r.Warnings {
		if strings.Contains(w, NotAPerformanceNumber) {
			return false
		}
	}
	return true
}

// FallbackClock is the clock a GPU result's samples were taken on when
// that is not the device clock (docs/protocol.md, "What one sample is"):
// the first word of env.timing ("cuda-events", "host-clock-block", held
// events), or "" when the samples are the device clock (CUPTI), the result
// ran on a CPU (the host clock is the clock there), or the framework's
// clock was chosen because the call is launch-bound (tracing would widen
// its gaps: a choice, not a fallback). Tables mark such rows.
func (r Result) FallbackClock() string {
	t := r.Env.Timing
	if t == "" || r.Device.Kind == "" || r.Device.Kind == "cpu" || strings.HasPrefix(t, "cupti-kernel-") ||
		strings.Contains(t, "launch-bound call") {
		return ""
	}
	label, _, _ := strings.Cut(t, ":")
	return label
}
