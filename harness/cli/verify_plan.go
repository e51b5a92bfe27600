package cli

// xbench verify --plan FILE: many configurations in one invocation. Each
// backend process starts once and serves every configuration (a framework
// import costs seconds; CI verifies 17 configurations), as a sweep's do.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/workload"
)

const verifyPlanHelp = `
--plan FILE: each line of FILE is the flags of one verify configuration
(--workload, its parameters, --phase, --backends, --timeout, --seed, --dump),
separated by spaces; blank lines and text from # on are ignored. Flags given
beside --plan on the command line come before every line's (a line may
override them); the flags of the whole invocation (--env, --results,
--plugin-path, --log-level, --max-reply, --compile-cache) belong there only.
Every line is checked before any backend starts; every configuration is
verified and printed as a verify of its own line would, and the exit status
is 1 when any of them failed.
`

// planOnly are the flags of the whole invocation: its registry, its
// sessions and where it writes, refused inside a plan line.
var planOnly = []string{"env", "results", "plugin-path", "log-level", "max-reply", "compile-cache", "plan", "help"}

type planLine struct {
	n    int // 1-based line number in the file
	args []string
}

// readPlan reads the lines of a plan file that name a configuration.
func readPlan(path string) ([]planLine, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("--plan %q cannot be read: %v", workload.Cut(path, 80), err)
	}
	defer f.Close()
	var lines []planLine
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		args := strings.Fields(text)
		if len(args) == 0 {
			continue
		}
		for _, a := range args {
			if strings.ContainsAny(a, `"'\`) {
				return nil, usagef("--plan %s line %d: %q has a quote or backslash (allowed: flags and values separated by spaces, taken as written)", path, n, workload.Cut(a, 80))
			}
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			if a == "-h" {
				name = "help"
			}
			if (strings.HasPrefix(a, "--") || a == "-h") && contains(planOnly, name) {
				return nil, usagef("--plan %s line %d: --%s is not allowed in a plan line (allowed there: a configuration's flags; give --%s on the command line, for the whole plan)", path, n, name, name)
			}
		}
		lines = append(lines, planLine{n: n, args: args})
	}
	if err := sc.Err(); err != nil {
		return nil, usagef("--plan %q cannot be read: %v", workload.Cut(path, 80), err)
	}
	if len(lines) == 0 {
		return nil, usagef("--plan %s has no configuration (allowed: a file with at least one line of verify flags)", path)
	}
	return lines, nil
}

// withoutPlan is args less --plan and its value: the flags every line shares.
func withoutPlan(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--plan":
			i++
		case strings.HasPrefix(args[i], "--plan="):
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// verifyPlan checks every line, then verifies them in order on sessions
// shared by the lines that pin the same device, so each backend process
// starts once per session and not once per configuration.
func verifyPlan(ctx context.Context, a *App, top *verification, args []string) error {
	lines, err := readPlan(top.plan)
	if err != nil {
		return err
	}
	shared := withoutPlan(args)
	vs := make([]*verification, len(lines))
	dumps := map[string]int{}
	for i, l := range lines {
		v, help, err := parseVerification(a, append(append([]string(nil), shared...), l.args...))
		if err != nil {
			return usagef("--plan %s line %d: %v", top.plan, l.n, err)
		}
		if help {
			return usagef("--plan %s line %d: -h asks for help (allowed in a plan line: a configuration's flags)", top.plan, l.n)
		}
		if v.dump != "" {
			if prev, ok := dumps[v.dump]; ok {
				return usagef("--plan %s lines %d and %d both --dump into %q (allowed: a folder of its own per line)", top.plan, prev, l.n, workload.Cut(v.dump, 80))
			}
			dumps[v.dump] = l.n
		}
		vs[i] = v
	}
	if err := top.c.checkWritable(); err != nil {
		return err
	}
	reg, root, err := a.openRegistry(&top.c)
	if err != nil {
		return err
	}
	sessions := map[string]*bench.Session{}
	defer func() {
		for _, s := range sessions {
			s.Close()
		}
	}()
	var bad []string
	for i, v := range vs {
		key := v.job.GPU + "|" + v.job.Device
		sess, ok := sessions[key]
		if !ok {
			sess = a.newSession(reg, root, pinEnv(v.job.GPU), v.job.Device)
			sessions[key] = sess
		}
		if i > 0 {
			fmt.Fprintln(a.Stdout)
		}
		fmt.Fprintf(a.Stderr, "== verify plan %s line %d (%d of %d): %s\n", top.plan, lines[i].n, i+1, len(vs), strings.Join(lines[i].args, " "))
		failed, err := runVerification(ctx, a, reg, sess, v)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case err != nil:
			fmt.Fprintf(a.Stderr, "verify plan %s line %d: %v\n", top.plan, lines[i].n, err)
			bad = append(bad, fmt.Sprintf("line %d (%s): %v", lines[i].n, describe(v.job.Config), firstLine(err.Error())))
		case len(failed) > 0:
			bad = append(bad, fmt.Sprintf("line %d (%s): %s", lines[i].n, describe(v.job.Config), strings.Join(failed, ", ")))
		}
	}
	if len(bad) > 0 {
		return &ExitError{Code: 1, Msg: fmt.Sprintf("verification failed in %d of %d configurations of --plan %s: %s",
			len(bad), len(vs), top.plan, strings.Join(bad, "; "))}
	}
	return nil
}
