// Command genfacts writes the facts every backend must agree on
// (harness/facts) to plugins/_python/xbench_py/facts.json, which the Python
// backends read. Run it with `go generate ./harness/facts` after changing a
// workload's parameters or spec facts, the protocol version or the devices.
package main

import (
	"fmt"
	"os"

	"github.com/xbench/xbench/harness/facts"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "genfacts:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	out := facts.PythonPath
	if len(args) > 0 {
		out = args[0]
	}
	raw, err := facts.JSON()
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, raw, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
