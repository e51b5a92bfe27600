// Command genschema writes schema/result.schema.json from the Go types.
// Run it with `go generate ./harness/result` after changing a result field.
package main

import (
	"fmt"
	"os"

	"github.com/xbench/xbench/harness/result"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "genschema:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	out := "schema/result.schema.json"
	if len(args) > 0 {
		out = args[0]
	}
	raw, err := result.GenerateSchema()
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, raw, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
