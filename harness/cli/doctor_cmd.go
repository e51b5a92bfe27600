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
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
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
	l, err := a.openListed("doctor", args)
	if l == nil || err != nil {
		return err
	}
	reg, root, names, c := l.reg, l.root, l.names, l.flags
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
