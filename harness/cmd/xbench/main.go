// Command xbench runs implementations of a workload side by side, checks
// that they compute the same thing, and times them. It links no backend:
// each is a plugin process (go-plugin), found through plugins/*/plugin.json.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "xbench:", backend.ErrorText(err))
	}
	os.Exit(cli.ExitCode(err))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	app := &cli.App{Stdout: stdout, Stderr: stderr}
	return app.Run(ctx, args)
}
