package workload

// Factser is a workload with facts of its spec beyond its parameters:
// tables and constants every backend needs (TTT's model sizes, its norm
// epsilon). They reach the Python backends through the catalog
// (harness/facts), so each is declared once, here in Go.
type Factser interface {
	Facts() any
}

// ParamFacts is a Param as the catalog writes it.
type ParamFacts struct {
	Name    string            `json:"name"`
	Kind    Kind              `json:"kind"`
	Default string            `json:"default"`
	Allowed []string          `json:"allowed,omitempty"`
	Aliases map[string]string `json:"aliases,omitempty"`
	Min     *int64            `json:"min,omitempty"` // Int only
	Max     *int64            `json:"max,omitempty"` // Int only
	Help    string            `json:"help"`
}

// Facts is one workload in the catalog: its name, phases (the first is the
// default), parameters in display order, and its Factser facts if any.
type Facts struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Phases      []string     `json:"phases"`
	Params      []ParamFacts `json:"params"`
	Spec        any          `json:"spec,omitempty"`
}

// AllPhases are the phases of the protocol, in their canonical order.
var AllPhases = []string{PhaseForward, PhaseBackward, PhaseBoth, PhaseInnerOnly}

// Catalog describes every registered workload, in Names order.
func Catalog() []Facts {
	var out []Facts
	for _, w := range All() {
		f := Facts{Name: w.Name(), Description: w.Description(), Phases: w.Phases()}
		for _, p := range w.Params() {
			pf := ParamFacts{Name: p.Name, Kind: p.Kind, Default: p.Default, Allowed: p.Allowed, Aliases: p.Aliases, Help: p.Help}
			if p.Kind == Int {
				lo, hi := p.Min, p.Upper()
				pf.Min, pf.Max = &lo, &hi
			}
			f.Params = append(f.Params, pf)
		}
		if fs, ok := w.(Factser); ok {
			f.Spec = fs.Facts()
		}
		out = append(out, f)
	}
	return out
}
