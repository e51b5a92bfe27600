package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/runner"
	"github.com/xbench/xbench/harness/store"
)

// commonFlags are the flags of every command that starts backends.
type commonFlags struct {
	backends, env, logLevel, resultsDir string
	pluginPath                          []string
	timeout                             time.Duration
}

func (c *commonFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.backends, "backends", "", "comma-separated backends or variants (default: every available one)")
	fs.StringVar(&c.env, "env", "auto", "how to run non-built-in backends: auto, nix, venv")
	fs.StringVar(&c.logLevel, "log-level", "warn", "harness log level: trace, debug, info, warn, error")
	fs.StringVar(&c.resultsDir, "results", "results", "folder the results are written to")
	fs.StringSliceVar(&c.pluginPath, "plugin-path", nil, "more folders holding <name>/plugin.json backends")
	fs.DurationVar(&c.timeout, "timeout", 300*time.Second, "longest one backend may take for one configuration")
}

// openRegistry finds the checkout and its backends, logging to stderr.
func (a *App) openRegistry(c *commonFlags) (*registry.Registry, string, error) {
	return a.openRegistryWith(c, a.logger(c.logLevel))
}

// openRegistryWith is openRegistry with the caller's logger for plugin output.
func (a *App) openRegistryWith(c *commonFlags, logger hclog.Logger) (*registry.Registry, string, error) {
	mode, err := runner.ParseMode(c.env)
	if err != nil {
		return nil, "", usagef("%s", err)
	}
	cwd, _ := os.Getwd()
	root, err := registry.FindRoot(cwd)
	if err != nil {
		return nil, "", err
	}
	self, err := selfPath()
	if err != nil {
		return nil, "", err
	}
	reg, err := registry.Open(registry.Options{Root: root, ExtraDirs: c.pluginPath, Env: mode, Self: self, Logger: logger}, a.Builtins)
	return reg, root, err
}

func runCmd(ctx context.Context, a *App, args []string) error {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	var w workloadFlags
	var c commonFlags
	var asJSON bool
	var baseline string
	w.register(fs, "125m")
	c.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print one result JSON per line instead of a table")
	fs.StringVar(&baseline, "baseline", "", "backend the ratio column compares against (default: the fastest)")
	if help, err := parseFlags(a, fs, args); help || err != nil {
		return err
	}
	cfg, err := w.config()
	if err != nil {
		return err
	}
	reg, root, err := a.openRegistry(&c)
	if err != nil {
		return err
	}
	sess := a.newSession(reg, root)
	defer sess.Close()
	names, err := selectBackends(ctx, a, reg, sess, c.backends)
	if err != nil {
		return err
	}
	if baseline != "" && !contains(names, baseline) {
		return usagef("--baseline %q is not among the backends run (backends: %s)", baseline, strings.Join(names, ", "))
	}
	var results []result.Result
	for i, name := range names {
		fmt.Fprintf(a.Stderr, "[%d/%d] %s: %s on %s ...\n", i+1, len(names), name, describe(cfg), w.device)
		start := time.Now()
		r := sess.Run(ctx, name, w.device, cfg, c.timeout)
		path, err := store.WriteResult(c.resultsDir, r)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.Stderr, "[%d/%d] %s: %s in %.1fs, written to %s\n", i+1, len(names), name, r.Status, time.Since(start).Seconds(), path)
		results = append(results, r)
		if asJSON {
			line, _ := json.Marshal(r)
			fmt.Fprintln(a.Stdout, string(line))
		}
	}
	if !asJSON {
		writeRunTable(a.Stdout, results, baseline)
	}
	return failedError(results)
}

// newSession starts a session that reports each backend's start-up time.
func (a *App) newSession(reg *registry.Registry, root string) *bench.Session {
	sess := bench.NewSession(reg, newRunID(), sessionMeta(root, reg), nil)
	sess.OnStart = func(name string, took time.Duration) {
		fmt.Fprintf(a.Stderr, "started %s in %.2fs (process, imports, handshake; paid once per invocation)\n", name, took.Seconds())
	}
	return sess
}

func failedError(results []result.Result) error {
	var bad []string
	for _, r := range results {
		if r.Status == result.StatusFailed || r.Status == result.StatusTimeout {
			bad = append(bad, r.Backend+" ("+string(r.Status)+")")
		}
	}
	if len(bad) > 0 {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("%d of %d backends did not produce a result: %s", len(bad), len(results), strings.Join(bad, ", "))}
	}
	return nil
}

func describe(c result.Config) string {
	return fmt.Sprintf("%s %s %s %s, batch %d, seq-len %d", c.ModelSize, c.TTTType, c.Phase(), c.Dtype, c.Batch, c.SeqLen)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
