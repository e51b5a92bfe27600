package profile

import "time"

// Phases records when each named phase of a call ran, for a backend that
// profiles its own code with the host clock (the TTT models in Go). A nil
// *Phases records nothing and reads no clock, so a timed run pays one nil
// check per phase.
type Phases struct {
	Spans []PhaseSpan
}

// PhaseSpan is one phase of one call: what ran, when it started, how long.
type PhaseSpan struct {
	Name  string
	Start time.Time
	Dur   time.Duration
}

// Begin reads the clock when recording.
func (p *Phases) Begin() time.Time {
	if p == nil {
		return time.Time{}
	}
	return time.Now()
}

// End closes phase name, begun at t0, and returns now as the start of the
// next phase.
func (p *Phases) End(name string, t0 time.Time) time.Time {
	if p == nil {
		return t0
	}
	now := time.Now()
	p.Spans = append(p.Spans, PhaseSpan{Name: name, Start: t0, Dur: now.Sub(t0)})
	return now
}
