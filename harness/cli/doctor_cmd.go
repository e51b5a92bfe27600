package cli

// xbench doctor: on this machine, every backend, the devices it can run
// on, the clock its samples would be taken on, and each thing missing with
// the reason and the one command that fixes it. The machine and the
// frameworks' versions come from xbench_py.environment (the one
// definition setup.sh uses too); the backends' capabilities from the
// backends themselves, as `xbench backends` asks them.
//
// Exit codes: 0 nothing to fix; 1 something to fix (each listed with its
// command); 2 bad flags.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/manifest"
	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/runner"
)

// envReport is `python -m xbench_py.environment check --json --clock`.
type envReport struct {
	Machine       string         `json:"machine"`
	How           string         `json:"how"`
	Python        string         `json:"python"`
	PythonVersion string         `json:"python_version"`
	Frameworks    []envFramework `json:"frameworks"`
	Clock         *envClock      `json:"clock"`
	GPU           *envGPU        `json:"gpu"`
}

// envGPU is whether torch opens this machine's GPU (environment.gpu).
type envGPU struct {
	Opened  bool     `json:"opened"`
	By      string   `json:"by"`
	Devices []string `json:"devices"`
	Why     string   `json:"why"`
}

type envFramework struct {
	Name     string   `json:"name"`
	Backends []string `json:"backends"`
	Status   string   `json:"status"` // ok, missing, unsupported, mismatch
	Version  string   `json:"version"`
	Expected string   `json:"expected"`
	Why      string   `json:"why"`
	Fix      string   `json:"fix"`
}

type envClock struct {
	DeviceClock bool   `json:"device_clock"`
	Label       string `json:"label"`
	Why         string `json:"why"`
}

// doctorRow is one backend on this machine.
type doctorRow struct {
	Name, Runtime string
	Devices       []string // what it declares (variants included)
	Clock         string
	Status        string // ok, or why it cannot run
}

// doctorProblem is one thing to fix.
type doctorProblem struct {
	Thing, Why, Fix string
}

type doctorReport struct {
	Env      envReport
	Rows     []doctorRow
	Problems []doctorProblem
}

func doctorCmd(ctx context.Context, a *App, args []string) error {
	fs := pflag.NewFlagSet("doctor", pflag.ContinueOnError)
	var c commonFlags
	c.register(fs)
	if help, err := parseFlags(a, fs, args); help || err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	reg, root, err := a.openRegistry(&c)
	if err != nil {
		return err
	}
	names, err := listedBackends(reg.Names(), c.backends)
	if err != nil {
		return err
	}
	env, err := readEnvironment(ctx, root)
	if err != nil {
		return err
	}
	sess := bench.NewSession(reg, newRunID(), sessionMeta(root, reg), nil)
	defer sess.Close()
	rep := doctorReport{Env: env}
	for _, name := range names {
		m, _ := reg.Manifest(name)
		row := doctorRow{Name: name, Runtime: m.Runtime, Status: "ok"}
		if err := requireInstalled(reg, name); err != nil {
			row.Status = "not installed: " + missingModules(reg, name)
		} else if info, err := startBounded(ctx, sess, name, c.startBound()); err != nil {
			row.Status = "failed to start: " + firstLine(backend.ErrorText(err))
			rep.Problems = append(rep.Problems, doctorProblem{Thing: "backend " + name, Why: row.Status,
				Fix: fmt.Sprintf("bin/xbench backends --backends %s --log-level debug   # shows its stderr", name)})
		} else {
			row.Devices = declaredDevices(info)
		}
		row.Clock = backendClock(env, m.Runtime)
		rep.Rows = append(rep.Rows, row)
	}
	rep.Problems = append(frameworkProblems(env, names), rep.Problems...)
	rep.Problems = append(rep.Problems, clockProblems(env, rep.Rows)...)
	rep.Problems = append(rep.Problems, gpuProblems(env)...)
	writeDoctor(a.Stdout, rep)
	if len(rep.Problems) > 0 {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("doctor: %d thing(s) to fix on this %s machine (listed above with their commands)", len(rep.Problems), env.Machine)}
	}
	return nil
}

// readEnvironment runs xbench_py.environment with the backends' Python
// (its --probe imports torch and CUPTI: a few seconds).
func readEnvironment(ctx context.Context, root string) (envReport, error) {
	py := runner.Python(root)
	shown := py // fix commands name .venv/bin/python as the README does, run from the checkout
	if rel, err := filepath.Rel(root, py); err == nil && !strings.HasPrefix(rel, "..") {
		shown = rel
	}
	cmd := exec.CommandContext(ctx, py, "-m", "xbench_py.environment", "check", "--json", "--probe", "--root", root, "--python", shown)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "plugins", "_python"))
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if x, ok := err.(*exec.ExitError); ok && len(x.Stderr) > 0 {
			msg = firstLine(strings.TrimSpace(string(x.Stderr)))
		}
		return envReport{}, fmt.Errorf("check the environment with %s -m xbench_py.environment: %s (run ./setup.sh first)", py, msg)
	}
	return parseEnvironment(out)
}

func parseEnvironment(out []byte) (envReport, error) {
	var env envReport
	if err := json.Unmarshal(out, &env); err != nil {
		return envReport{}, fmt.Errorf("read xbench_py.environment's report: %w", err)
	}
	return env, nil
}

func missingModules(reg *registry.Registry, name string) string {
	missing, err := reg.Missing(name)
	if err != nil {
		return firstLine(err.Error())
	}
	return "needs " + strings.Join(missing, ", ")
}

// declaredDevices is every device kind the backend or a variant declares.
func declaredDevices(info backend.Info) []string {
	var out []string
	add := func(c backend.Capabilities) {
		for _, w := range c.Workloads {
			for _, d := range w.Devices {
				if !slices.Contains(out, d) {
					out = append(out, d)
				}
			}
		}
	}
	add(info.Capabilities)
	for _, v := range info.Variants {
		add(v.Capabilities)
	}
	slices.Sort(out)
	return out
}

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
