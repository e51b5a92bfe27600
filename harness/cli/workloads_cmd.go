package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/xbench/xbench/harness/facts"
	"github.com/xbench/xbench/harness/workload"
)

// workloadsCmd lists every registered workload with its phases and its
// parameters: the flags `run`, `sweep` and `verify` take for it. With
// --json it prints harness/facts, the document the Python backends read
// (plugins/_python/xbench_py/facts.json).
func workloadsCmd(_ context.Context, a *App, args []string) error {
	if len(args) == 1 && args[0] == "--json" {
		raw, err := facts.JSON()
		if err != nil {
			return err
		}
		_, err = a.Stdout.Write(raw)
		return err
	}
	if len(args) > 0 {
		return usagef("xbench workloads takes no arguments but --json (got %q)", workload.Cut(args[0], 80))
	}
	for i, w := range workload.All() {
		if i > 0 {
			fmt.Fprintln(a.Stdout)
		}
		fmt.Fprintf(a.Stdout, "%s: %s\n", w.Name(), w.Description())
		fmt.Fprintf(a.Stdout, "  phases: %s (--phase; default %s)\n", strings.Join(w.Phases(), ", "), w.Phases()[0])
		if s, ok := w.(workload.Suiter); ok {
			fmt.Fprintf(a.Stdout, "  --shapes: %s\n", s.SuiteHelp())
		}
		if e, ok := w.(workload.Expander); ok {
			name, help := e.LimitFlag()
			fmt.Fprintf(a.Stdout, "  --%s: %s\n", name, help)
		}
		tw := tabwriter.NewWriter(a.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  flag\tdefault\tallowed\tmeaning")
		for _, p := range w.Params() {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.Flag(), p.Default, p.AllowedText(), p.Help)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
