package cli

// What doctor concludes from the environment's report and the backends:
// each backend's clock on this machine, the problems with their one fix
// command, and the text it prints.

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/xbench/xbench/harness/manifest"
)

// machineDevice is the device kind a machine's GPU is asked for.
func machineDevice(machine string) string {
	switch machine {
	case "nvidia":
		return "cuda"
	case "amd":
		return "rocm"
	}
	return "cpu"
}

// backendClock is the clock a backend's samples take on this machine
// (docs/protocol.md, "What one sample is").
func backendClock(env envReport, runtime string) string {
	switch {
	case env.Machine == "cpu" || env.Machine == "":
		return "host-clock (no GPU: the host clock is the clock)"
	case runtime != manifest.RuntimePython && env.Machine == "nvidia":
		return "cupti-kernel-span where its Go side loads libcupti, else held device events"
	case runtime != manifest.RuntimePython:
		return "FALLBACK: device events around each launch (no CUPTI on ROCm)"
	case env.Clock != nil && env.Clock.DeviceClock:
		return env.Clock.Label + " (device clock)"
	case env.Clock != nil:
		return "FALLBACK: the framework's own clock (" + env.Clock.Why + ")"
	}
	return "unknown (no clock probe)"
}

// frameworkProblems are the frameworks missing or wrong for the listed backends.
func frameworkProblems(env envReport, names []string) []doctorProblem {
	var out []doctorProblem
	for _, f := range env.Frameworks {
		if f.Status == "ok" || !slices.ContainsFunc(f.Backends, func(b string) bool { return slices.Contains(names, b) }) {
			continue
		}
		why := f.Status
		if f.Version != "" {
			why += " (" + f.Version + ", expected " + f.Expected + ")"
		}
		if f.Why != "" {
			why += ": " + f.Why
		}
		out = append(out, doctorProblem{Thing: f.Name + " (" + strings.Join(f.Backends, ", ") + ")", Why: why, Fix: f.Fix})
	}
	return out
}

// clockProblems: a Python backend on a GPU without the device clock. On
// NVIDIA the fix is cupti-python (already listed when it is missing); on
// ROCm no fix exists in xbench yet.
func clockProblems(env envReport, rows []doctorRow) []doctorProblem {
	if env.Machine != "nvidia" || env.Clock == nil || env.Clock.DeviceClock {
		return nil
	}
	for _, f := range env.Frameworks {
		if f.Name == "cupti-python" && f.Status != "ok" {
			return nil // its own line says why and how
		}
	}
	var python []string
	for _, r := range rows {
		if r.Runtime == manifest.RuntimePython {
			python = append(python, r.Name)
		}
	}
	return []doctorProblem{{Thing: "device clock (" + strings.Join(python, ", ") + ")", Why: env.Clock.Why,
		Fix: ".venv/bin/python -c 'from cupti import cupti; cupti.activity_flush_all(0)'   # shows why libcupti does not load"}}
}

// gpuProblems: a GPU machine whose GPU torch cannot open (a driver older
// than the wheels' CUDA, a device node the user may not open, none left by
// CUDA_VISIBLE_DEVICES); torch missing is its own problem already.
func gpuProblems(env envReport) []doctorProblem {
	g := env.GPU
	if env.Machine == "cpu" || g == nil || g.Opened || g.By == "" {
		return nil
	}
	fix := "nvidia-smi   # the driver's CUDA version (top right) must be at least the CUDA torch was built for; update the driver, or use a torch built for it (./setup.sh --python)"
	if env.Machine == "amd" {
		fix = "sudo usermod -aG render,video $USER   # /dev/kfd and /dev/dri need these groups (log in again); rocm-smi shows the GPUs the driver sees"
	}
	return []doctorProblem{{Thing: "the " + machineDevice(env.Machine) + " GPU", Why: g.By + " cannot open it: " + g.Why, Fix: fix}}
}

// writeDoctor prints the machine, one row per backend, then what to fix.
func writeDoctor(w io.Writer, rep doctorReport) {
	e := rep.Env
	fmt.Fprintf(w, "machine: %s (%s)\n", e.Machine, e.How)
	fmt.Fprintf(w, "python:  %s (%s)\n", e.Python, e.PythonVersion)
	if e.Machine != "cpu" {
		gpus := "not probed"
		if e.GPU != nil && e.GPU.Opened {
			gpus = strings.Join(e.GPU.Devices, ", ") + " (opened by " + e.GPU.By + ")"
		} else if e.GPU != nil {
			gpus = "NOT OPENED: " + e.GPU.Why
		}
		fmt.Fprintf(w, "device:  %s: %s\n", machineDevice(e.Machine), gpus)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "backend\truntime\truns here on\tdeclares\tclock on this machine\tstatus")
	for _, r := range rep.Rows {
		here, declares := "-", "-"
		if len(r.Devices) > 0 {
			declares = strings.Join(r.Devices, ",")
			if d := machineDevice(e.Machine); slices.Contains(r.Devices, d) {
				here = d
				if e.Machine != "cpu" && (e.GPU == nil || !e.GPU.Opened) {
					here = d + "? (GPU not opened)"
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Runtime, here, declares, r.Clock, r.Status)
	}
	tw.Flush()
	fmt.Fprintln(w)
	if len(rep.Problems) == 0 {
		fmt.Fprintln(w, "nothing to fix")
		return
	}
	fmt.Fprintf(w, "to fix (%d):\n", len(rep.Problems))
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "- %s: %s\n", p.Thing, p.Why)
		if p.Fix != "" {
			fmt.Fprintf(w, "    %s\n", p.Fix)
		}
	}
}
