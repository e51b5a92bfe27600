package profile

import (
	"testing"
)

func TestPhasesRecordInOrder(t *testing.T) {
	var off *Phases
	if t0 := off.Begin(); !t0.IsZero() || !off.End("x", t0).IsZero() {
		t.Error("a nil Phases read the clock")
	}
	p := &Phases{}
	t0 := p.Begin()
	t1 := p.End("embed", t0)
	p.End("gemm", t1)
	if len(p.Spans) != 2 || p.Spans[0].Name != "embed" || p.Spans[1].Name != "gemm" {
		t.Fatalf("spans %+v, want embed then gemm", p.Spans)
	}
	if !p.Spans[1].Start.Equal(t1) || !p.Spans[0].Start.Add(p.Spans[0].Dur).Equal(t1) || p.Spans[0].Dur < 0 {
		t.Errorf("spans %+v do not tile the calls' time", p.Spans)
	}
}
