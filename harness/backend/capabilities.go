package backend

import (
	"fmt"
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

// Unsupported returns why a request falls outside the capabilities, or ""
// when it is inside them. Device "auto" is inside whenever any device is.
func (c Capabilities) Unsupported(workload, device string, cfg result.Config) string {
	checks := []struct {
		what    string
		value   string
		allowed []string
	}{
		{"workload", workload, c.Workloads},
		{"ttt-type", cfg.TTTType, c.TTTTypes},
		{"phase", cfg.Phase(), c.Phases},
		{"dtype", cfg.Dtype, c.Dtypes},
		{"backbone", cfg.Backbone, c.Backbones},
	}
	if device != "auto" && device != "" {
		checks = append(checks, struct {
			what    string
			value   string
			allowed []string
		}{"device", device, c.Devices})
	}
	for _, ch := range checks {
		if !slices.Contains(ch.allowed, ch.value) {
			return fmt.Sprintf("%s %s is not supported (supported: %s)", ch.what, ch.value, orNone(ch.allowed))
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
