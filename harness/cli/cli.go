// Package cli is the xbench command line. It parses flags, checks them, and
// hands off to the packages that do the work; main only calls Run.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/workload"
)

// UsageError is bad input from the user: exit code 2, one clear line.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }

// ExitError carries a specific exit code (verify failures, compare regressions).
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// ExitCode maps an error returned by Run to the process exit code.
func ExitCode(err error) int {
	var u *UsageError
	var x *ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u), workload.IsInputError(err):
		return 2
	case errors.As(err, &x):
		return x.Code
	default:
		return 1
	}
}

// App is what every command needs: where to write, and the built-in backends.
type App struct {
	Stdout, Stderr io.Writer
	Builtins       map[string]registry.Builtin
}

type command struct {
	name, summary string
	run           func(ctx context.Context, a *App, args []string) error
	hidden        bool
}

func (a *App) commands() []command {
	return []command{
		{name: "run", summary: "time backends side by side on one configuration", run: runCmd},
		{name: "sweep", summary: "run many configurations into one resumable folder", run: sweepCmd},
		{name: "verify", summary: "check that backends compute the same model", run: verifyCmd},
		{name: "compare", summary: "compare two runs: ratio, interval, test and verdict per backend", run: compareCmd},
		{name: "report", summary: "write an HTML report with charts from a results folder", run: reportCmd},
		{name: "history", summary: "series over many result folders: steps by commit, a dashboard, CSV, a CI gate", run: historyCmd},
		{name: "export", summary: "write results as CSV or Go benchmark format (for benchstat)", run: exportCmd},
		{name: "pack", summary: "pack a finished campaign folder into one .tar.gz that report, history, export and compare read as the folder", run: packCmd},
		{name: "problems", summary: "KernelBench-format problem sets: baselines, candidate kernels, fast_p", run: problemsCmd},
		{name: "profile", summary: "run one configuration under each backend's own profiler: top kernels, categories, a Chrome trace", run: profileCmd},
		{name: "calibrate", summary: "measure the device's matmul peak and copy bandwidth through a backend", run: calibrateCmd},
		{name: "backends", summary: "list backends and what they support", run: backendsCmd},
		{name: "doctor", summary: "this machine: every backend, its devices and clock, and what to fix (exit 1 when something is)", run: doctorCmd},
		{name: "workloads", summary: "list workloads and their parameters", run: workloadsCmd},
		{name: "schema", summary: "print the result JSON Schema", run: schemaCmd},
		{name: "__plugin", hidden: true, run: pluginCmd},
	}
}

// Run executes one xbench invocation.
func (a *App) Run(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		a.usage(a.Stdout)
		if len(args) == 0 {
			return usagef("no command given")
		}
		return nil
	}
	for _, c := range a.commands() {
		if c.name == args[0] {
			return c.run(ctx, a, args[1:])
		}
	}
	var names []string
	for _, c := range a.commands() {
		if !c.hidden {
			names = append(names, c.name)
		}
	}
	return usagef("unknown command %q (commands: %s)", args[0], strings.Join(names, ", "))
}

func (a *App) usage(w io.Writer) {
	fmt.Fprintln(w, "xbench: run implementations of a workload (ttt, gemm, ...) side by side, check they agree, and time them.")
	fmt.Fprintln(w, "\nUsage: xbench <command> [flags]   (xbench <command> --help for its flags)")
	fmt.Fprintln(w, "\nCommands:")
	for _, c := range a.commands() {
		if !c.hidden {
			fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
		}
	}
}

// logger writes harness and plugin logs to stderr at the given level.
func (a *App) logger(level string) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "xbench", Output: a.Stderr, Level: hclog.LevelFromString(level)})
}

// selfPath is the xbench binary, launched again for built-in plugins.
func selfPath() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the xbench binary to start plugins: %w", err)
	}
	return p, nil
}

// warnSkipped names every stored file a reader skipped, on stderr, so a bad
// file is seen without stopping the command.
func warnSkipped(a *App, skipped []string) {
	for _, s := range skipped {
		fmt.Fprintf(a.Stderr, "warning: skipped %s\n", s)
	}
}
