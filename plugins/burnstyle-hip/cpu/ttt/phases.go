package ttt

import "time"

// Phases records when each named phase of a step ran, for `xbench
// profile`. A nil *Phases records nothing and reads no clock.
type Phases struct {
	Spans []Span
}

// Span is one phase of one call.
type Span struct {
	Name  string
	Start time.Time
	Dur   time.Duration
}

func (p *Phases) start() time.Time {
	if p == nil {
		return time.Time{}
	}
	return time.Now()
}

// end closes phase name, begun at t0, and returns the next phase's start.
func (p *Phases) end(name string, t0 time.Time) time.Time {
	if p == nil {
		return t0
	}
	now := time.Now()
	p.Spans = append(p.Spans, Span{Name: name, Start: t0, Dur: now.Sub(t0)})
	return now
}
