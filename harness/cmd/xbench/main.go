// Command xbench runs TTT implementations side by side, checks that they
// compute the same thing, and times them.
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
	"github.com/xbench/xbench/harness/registry"
	burnstylehip "github.com/xbench/xbench/plugins/burnstyle-hip"
)

// builtins are the backends compiled into this binary; each still has a
// plugins/<name>/plugin.json and runs in its own child process.
var builtins = map[string]registry.Builtin{
	"burnstyle-hip": func() backend.Backend { return burnstylehip.New() },
}

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
	app := &cli.App{Stdout: stdout, Stderr: stderr, Builtins: builtins}
	return app.Run(ctx, args)
}
