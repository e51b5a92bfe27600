package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/schema"
)

// backendsCmd lists every backend with its runtime, nix shell and declared
// capabilities (asked of the running backend, so the list cannot go stale).
func backendsCmd(ctx context.Context, a *App, args []string) error {
	l, err := a.openListed("backends", args)
	if l == nil || err != nil {
		return err
	}
	reg, root, names, c := l.reg, l.root, l.names, l.flags
	for _, e := range reg.Skipped {
		fmt.Fprintf(a.Stderr, "warning: skipped a backend: %v\n", e)
	}
	sess := bench.NewSession(reg, newRunID(), sessionMeta(root, reg), nil)
	defer sess.Close()
	tw := tabwriter.NewWriter(a.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "backend\truntime\tshell\tworkload\tphases\tdtypes\tdevices\tother values\tstatus")
	for _, name := range names {
		m, _ := reg.Manifest(name)
		if err := requireInstalled(reg, name); err != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t-\t-\t-\t-\tnot installed: %s\n", name, m.Runtime, m.Shell, orDash(m.Workloads), firstLine(err.Error()))
			continue
		}
		info, err := startBounded(ctx, sess, name, c.startBound())
		if err != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t-\t-\t-\t-\tfailed to start: %s\n", name, m.Runtime, m.Shell, orDash(m.Workloads), firstLine(backend.ErrorText(err)))
			continue
		}
		row := func(full string, c backend.Capabilities) {
			for _, w := range c.Workloads {
				var other []string
				for _, k := range slices.Sorted(maps.Keys(w.Values)) {
					if k != "dtype" {
						other = append(other, k+"="+strings.Join(w.Values[k], ","))
					}
				}
				for _, k := range slices.Sorted(maps.Keys(w.Max)) {
					other = append(other, fmt.Sprintf("%s<=%d", k, w.Max[k]))
				}
				status := "ok"
				if len(m.Workloads) > 0 && !slices.Contains(m.Workloads, w.Workload) {
					// run, verify and sweep start a backend for a workload only when
					// its plugin.json lists it (or --backends names it)
					status = fmt.Sprintf("ok, but plugin.json \"workloads\" lacks %s: it runs only when --backends names it", w.Workload)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", full, m.Runtime, m.Shell, w.Workload,
					strings.Join(w.Phases, ","), orDash(w.Values["dtype"]), strings.Join(w.Devices, ","), orDash(other), status)
			}
		}
		row(name, info.Capabilities)
		for _, v := range info.Variants {
			row(backend.FullName(name, v.Name), v.Capabilities)
		}
	}
	return tw.Flush()
}

func schemaCmd(_ context.Context, a *App, args []string) error {
	if len(args) > 0 {
		return usagef("xbench schema takes no arguments (got %q)", args[0])
	}
	_, err := a.Stdout.Write(schema.ResultJSON)
	return err
}

func orDash(list []string) string {
	if len(list) == 0 {
		return "-"
	}
	return strings.Join(list, ",")
}

// listedBackends is the backends to list: all of them, or those --backends
// names (each started to ask what it supports, so naming one spares
// starting the others).
// listed is what a command that reports on backends (backends, doctor)
// starts from: its flags, the registry, its root and the backends
// --backends names (all by default).
type listed struct {
	flags commonFlags
	reg   *registry.Registry
	root  string
	names []string
}

// openListed parses such a command's flags and opens the registry; nil
// after --help or an error.
func (a *App) openListed(cmd string, args []string) (*listed, error) {
	fs := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
	l := &listed{}
	l.flags.register(fs)
	if help, err := parseFlags(a, fs, args); help || err != nil {
		return nil, err
	}
	if err := l.flags.check(); err != nil {
		return nil, err
	}
	var err error
	if l.reg, l.root, err = a.openRegistry(&l.flags); err != nil {
		return nil, err
	}
	if l.names, err = listedBackends(l.reg.Names(), l.flags.backends); err != nil {
		return nil, err
	}
	return l, nil
}

func listedBackends(all []string, flag string) ([]string, error) {
	if flag == "" {
		return all, nil
	}
	var out []string
	for _, name := range strings.Split(flag, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(all, name) {
			return nil, usagef("--backends %q: %q is not a backend (allowed: a comma list of %s; variants are listed under their backend)",
				workload.Cut(flag, 80), workload.Cut(name, 80), strings.Join(all, ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}
