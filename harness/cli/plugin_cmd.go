package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/plugin"
	"github.com/xbench/xbench/harness/subprocess"
)

// pluginCmd is the child side of every backend process: it serves a
// built-in backend, or wraps a JSON-lines program, over go-plugin gRPC.
func pluginCmd(_ context.Context, a *App, args []string) error {
	fs := pflag.NewFlagSet("__plugin", pflag.ContinueOnError)
	name := fs.String("name", "", "backend name")
	builtin := fs.Bool("builtin", false, "serve the built-in backend of that name")
	dir := fs.String("dir", "", "working folder of the wrapped program")
	fs.SetOutput(a.Stderr)
	if err := fs.Parse(args); err != nil {
		return usagef("__plugin: %v", err)
	}
	logger := hclog.New(&hclog.LoggerOptions{Name: *name, Output: os.Stderr, JSONFormat: true, Level: hclog.Trace})
	if *builtin {
		ctor, ok := a.Builtins[*name]
		if !ok {
			return fmt.Errorf("__plugin: no built-in backend %q", *name)
		}
		plugin.Serve(ctor(), logger)
		return nil
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return usagef("__plugin: no command to wrap after --")
	}
	stderr := logger.StandardWriter(&hclog.StandardLoggerOptions{ForceLevel: hclog.Info})
	sub := subprocess.New(argv, os.Environ(), *dir, stderr)
	defer sub.Close()
	plugin.Serve(sub, logger)
	return nil
}
