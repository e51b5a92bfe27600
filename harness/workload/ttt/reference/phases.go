package reference

import "time"

// Phases records when each named phase of a forward ran, for `xbench
// profile`. A Model with a nil *Phases records nothing: timed runs pay one
// nil check per phase and no clock reads.
type Phases struct {
	Spans []PhaseSpan
}

// PhaseSpan is one phase of one call: what ran, when it started, how long.
type PhaseSpan struct {
	Name  string
	Start time.Time
	Dur   time.Duration
}

// begin reads the clock when profiling.
func (p *Phases) begin() time.Time {
	if p == nil {
		return time.Time{}
	}
	return time.Now()
}

// end closes the phase name that began at t0, and returns now as the
// start of the next phase.
func (p *Phases) end(name string, t0 time.Time) time.Time {
	if p == nil {
		return t0
	}
	now := time.Now()
	p.Spans = append(p.Spans, PhaseSpan{Name: name, Start: t0, Dur: now.Sub(t0)})
	return now
}
