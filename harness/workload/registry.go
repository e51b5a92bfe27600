package workload

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/xbench/xbench/harness/result"
)

var (
	mu       sync.RWMutex
	registry = map[string]Workload{}
)

// Register adds a workload; harness/workload/all calls it once per workload.
// A second workload of the same name is a programming error.
func Register(w Workload) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := registry[w.Name()]; dup {
		panic(fmt.Sprintf("workload %q registered twice", w.Name()))
	}
	registry[w.Name()] = w
}

// Names lists the registered workloads, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Sorted(maps.Keys(registry))
}

// All returns the registered workloads in Names order.
func All() []Workload {
	var out []Workload
	for _, n := range Names() {
		w, _ := Lookup(n)
		out = append(out, w)
	}
	return out
}

// Lookup finds a workload by name; the error names the flag, the value and
// what is allowed.
func Lookup(name string) (Workload, error) {
	mu.RLock()
	w, ok := registry[name]
	mu.RUnlock()
	if !ok {
		return nil, &ValueError{Flag: "--workload", Value: name, Allowed: strings.Join(Names(), ", ")}
	}
	return w, nil
}

// ParamOf finds one declared parameter.
func ParamOf(w Workload, name string) (Param, bool) {
	for _, p := range w.Params() {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// Resolve is the one validation at the boundary: it fills defaults, checks
// and canonicalises every parameter, checks the phase and the timing counts,
// then the workload's own rules. set holds the values the user gave, by
// parameter name; a name the workload does not declare is refused.
func Resolve(w Workload, phase string, set map[string]string, warmup, repeats int) (result.Config, error) {
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if _, ok := ParamOf(w, k); !ok {
			return result.Config{}, &ValueError{Flag: "--" + strings.ReplaceAll(k, "_", "-"), Value: set[k],
				Allowed: "no such parameter of workload " + w.Name() + "; its parameters: " + strings.Join(FlagNames(w), ", ")}
		}
	}
	if phase == "" {
		phase = w.Phases()[0]
	}
	if !slices.Contains(w.Phases(), phase) {
		return result.Config{}, &ValueError{Flag: "--phase", Value: phase, Allowed: strings.Join(w.Phases(), ", ")}
	}
	if warmup < 0 || int64(warmup) > 1<<20 {
		return result.Config{}, &ValueError{Flag: "--warmup", Value: fmt.Sprint(warmup), Allowed: "integers 0 to 1048576"}
	}
	if repeats < 1 || int64(repeats) > 1<<20 {
		return result.Config{}, &ValueError{Flag: "--repeats", Value: fmt.Sprint(repeats), Allowed: "integers 1 to 1048576"}
	}
	cfg := result.Config{Workload: w.Name(), Phase: phase, Params: map[string]string{}, Warmup: warmup, Repeats: repeats}
	for _, p := range w.Params() {
		v, ok := set[p.Name]
		if !ok {
			v = p.Default
		}
		c, err := p.Canonical(v)
		if err != nil {
			return result.Config{}, err
		}
		cfg.Params[p.Name] = c
	}
	if err := w.Check(cfg); err != nil {
		return result.Config{}, &CheckError{Err: err}
	}
	return cfg, nil
}

// Recheck validates a configuration that arrived from elsewhere (a sweep
// file, a stored result) by resolving its own values again.
func Recheck(cfg result.Config) error {
	w, err := Lookup(cfg.Workload)
	if err != nil {
		return err
	}
	_, err = Resolve(w, cfg.Phase, cfg.Params, cfg.Warmup, cfg.Repeats)
	return err
}

// FlagNames lists a workload's parameter flags in declaration order.
func FlagNames(w Workload) []string {
	var out []string
	for _, p := range w.Params() {
		out = append(out, p.Flag())
	}
	return out
}

// Key is the one canonical key of a configuration: workload, phase, then
// every parameter as key=value in the workload's declared order (sorted for
// a workload that is not registered). Results pair, group and deduplicate
// by it.
func Key(cfg result.Config) string {
	parts := []string{"workload=" + cfg.Workload, "phase=" + cfg.Phase}
	for _, k := range orderedKeys(cfg) {
		parts = append(parts, k+"="+cfg.Params[k])
	}
	return strings.Join(parts, " ")
}

// Label is the one human label of a configuration: the workload's own label
// of its parameters, then the phase when it is not the default.
func Label(cfg result.Config) string {
	w, err := Lookup(cfg.Workload)
	if err != nil {
		return Key(cfg)
	}
	l := w.Label(cfg)
	if cfg.Phase != w.Phases()[0] {
		l += " " + cfg.Phase
	}
	return l
}

// orderedKeys lists cfg's parameter names in declaration order, then any
// undeclared ones sorted.
func orderedKeys(cfg result.Config) []string {
	var out []string
	seen := map[string]bool{}
	if w, err := Lookup(cfg.Workload); err == nil {
		for _, p := range w.Params() {
			if _, ok := cfg.Params[p.Name]; ok {
				out = append(out, p.Name)
				seen[p.Name] = true
			}
		}
	}
	var rest []string
	for k := range cfg.Params {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// OrderedKeys is orderedKeys for callers that print columns.
func OrderedKeys(cfg result.Config) []string { return orderedKeys(cfg) }
