package backend

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/xbench/xbench/harness/result"
)

// FullName is how results and the CLI address a backend's variant.
func FullName(name, variant string) string {
	if variant == "" {
		return name
	}
	return name + "/" + variant
}

// SplitName splits "pytorch/compile" into its backend and variant.
func SplitName(full string) (name, variant string) {
	name, variant, _ = strings.Cut(full, "/")
	return name, variant
}

// Names lists the backend and every variant by full name.
func (i Info) Names() []string {
	out := []string{i.Name}
	for _, v := range i.Variants {
		out = append(out, FullName(i.Name, v.Name))
	}
	return out
}

// CapabilitiesOf returns the capabilities of the plain backend or a variant.
func (i Info) CapabilitiesOf(variant string) (Capabilities, error) {
	if variant == "" {
		return i.Capabilities, nil
	}
	for _, v := range i.Variants {
		if v.Name == variant {
			return v.Capabilities, nil
		}
	}
	return Capabilities{}, fmt.Errorf("backend %q has no variant %q (variants: %s)", i.Name, variant, strings.Join(i.Names(), ", "))
}

// For returns the capabilities of one workload.
func (c Capabilities) For(workload string) (WorkloadCaps, bool) {
	for _, w := range c.Workloads {
		if w.Workload == workload {
			return w, true
		}
	}
	return WorkloadCaps{}, false
}

// WorkloadNames lists the workloads declared, in declaration order.
func (c Capabilities) WorkloadNames() []string {
	var out []string
	for _, w := range c.Workloads {
		out = append(out, w.Workload)
	}
	return out
}

// Unsupported returns why a request falls outside the capabilities, or ""
// when it is inside them. Device "auto" is inside whenever any device is.
func (c Capabilities) Unsupported(device string, cfg result.Config) string {
	w, ok := c.For(cfg.Workload)
	if !ok {
		return fmt.Sprintf("workload %s is not supported (supported: %s)", cfg.Workload, orNone(c.WorkloadNames()))
	}
	if !slices.Contains(w.Phases, cfg.Phase) {
		return fmt.Sprintf("phase %s is not supported (supported: %s)", cfg.Phase, orNone(w.Phases))
	}
	if device != "auto" && device != "" && !slices.Contains(w.Devices, device) {
		return fmt.Sprintf("device %s is not supported (supported: %s)", device, orNone(w.Devices))
	}
	for _, k := range slices.Sorted(maps.Keys(w.Values)) {
		if v, ok := cfg.Params[k]; ok && !slices.Contains(w.Values[k], v) {
			return fmt.Sprintf("%s %s is not supported (supported: %s)", k, v, orNone(w.Values[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(w.Max)) {
		if _, ok := cfg.Params[k]; ok && int64(cfg.Int(k)) > w.Max[k] {
			return fmt.Sprintf("%s %s is above what this backend supports (at most %d)", k, cfg.Params[k], w.Max[k])
		}
	}
	return ""
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
