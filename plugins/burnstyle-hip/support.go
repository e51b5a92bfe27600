package burnstylehip

import (
	"fmt"
	"slices"
	"strings"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// devices lists the registered engines' devices.
func (n *Native) devices() []string {
	var out []string
	for _, d := range devicePreference {
		if _, ok := n.engines[d]; ok {
			out = append(out, d)
		}
	}
	return out
}

// capabilities is what the backend declares: every entry of workloadTable;
// devices come from the engines table, so registering an engine is the one
// edit that adds a device.
func (n *Native) capabilities() backend.Capabilities {
	devices := []string{}
	for _, d := range devicePreference {
		if _, ok := n.engines[d]; ok {
			devices = append(devices, d)
		}
	}
	slices.Sort(devices)
	caps := backend.Capabilities{Workloads: []backend.WorkloadCaps{}}
	for _, w := range workloadTable {
		caps.Workloads = append(caps.Workloads, w.caps(devices))
	}
	return caps
}

// unsupported returns "" when the backend declares support for the request,
// else a message naming the first thing it lacks and what it allows.
func (n *Native) unsupported(variant, device string, cfg result.Config) string {
	if variant != "" {
		var names []string
		for _, v := range variants {
			if v.Name == variant {
				return v.Capabilities.Unsupported(device, cfg)
			}
			names = append(names, v.Name)
		}
		return fmt.Sprintf("variant %q is not supported (burnstyle-hip's variants: %s)", variant, strings.Join(names, ", "))
	}
	if why := deviceUnsupported(device, cfg); why != "" {
		return why
	}
	return n.capabilities().Unsupported(device, cfg)
}

// backboneOf treats an empty backbone as the spec's default.
func backboneOf(cfg ttt.Config) string {
	if cfg.Backbone == "" {
		return "transformer"
	}
	return cfg.Backbone
}

// invalid reports a configuration no backend could run: a broken request,
// answered with an error rather than an unsupported result.
func invalid(cfg ttt.Config) error {
	switch {
	case cfg.Batch < 1:
		return fmt.Errorf("invalid config: batch %d < 1", cfg.Batch)
	case cfg.SeqLen < 1:
		return fmt.Errorf("invalid config: seq_len %d < 1", cfg.SeqLen)
	case cfg.MiniBatch < 1:
		return fmt.Errorf("invalid config: mini_batch %d < 1", cfg.MiniBatch)
	case cfg.SeqLen%cfg.MiniBatch != 0:
		return fmt.Errorf("invalid config: seq_len %d is not a multiple of mini_batch %d", cfg.SeqLen, cfg.MiniBatch)
	case cfg.Repeats < 1:
		return fmt.Errorf("invalid config: repeats %d < 1", cfg.Repeats)
	case cfg.Warmup < 0:
		return fmt.Errorf("invalid config: warmup %d < 0", cfg.Warmup)
	}
	return nil
}

// candidates resolves the requested device to the engines that may run it:
// one for a named device, every registered one in devicePreference order
// for "auto" (or empty). The message is non-empty when none starts.
func (n *Native) candidates(device string) ([]engine, string) {
	allowed := strings.Join(append(n.devices(), "auto"), ", ")
	if device == "" || device == "auto" {
		var out []engine
		for _, d := range devicePreference {
			if mk, ok := n.engines[d]; ok {
				if e, err := mk(); err == nil {
					out = append(out, e)
				}
			}
		}
		if len(out) == 0 {
			return nil, "no device is available (allowed: " + allowed + ")"
		}
		return out, ""
	}
	mk, ok := n.engines[device]
	if !ok {
		return nil, fmt.Sprintf("device %q is not supported (allowed: %s)", device, allowed)
	}
	e, err := mk()
	if err != nil {
		return nil, fmt.Sprintf("device %q is not available: %v", device, err)
	}
	return []engine{e}, ""
}

// deviceUnsupported is why a device the workload declares cannot run cfg
// (its entry's limits), or "".
func deviceUnsupported(device string, cfg result.Config) string {
	if w, ok := workloadOf(cfg.Workload); ok && w.limits != nil {
		return w.limits(device, cfg)
	}
	return ""
}
