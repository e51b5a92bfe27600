package cli

import (
	"slices"

	"github.com/xbench/xbench/harness/workload"

	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/runner"
)

// selectBackends turns --backends into full names. Named backends (and
// variants) must exist and have their Python packages; by default every
// backend whose packages are present and that implements the workload runs,
// with all its variants. Starting a backend to list its variants is bounded
// by --timeout (or --start-timeout), so a backend that hangs while starting cannot hang xbench.
func selectBackends(ctx context.Context, a *App, reg *registry.Registry, sess *bench.Session, flag string, limit bound, wl string) ([]string, error) {
	if flag != "" {
		var out []string
		for _, full := range strings.Split(flag, ",") {
			full = strings.TrimSpace(full)
			name, variant := backend.SplitName(full)
			if full == "" {
				return nil, usagef("--backends %q has an empty item (allowed: a comma list of %s)", workload.Cut(flag, 80), strings.Join(reg.Names(), ", "))
			}
			if _, ok := reg.Manifest(name); !ok {
				return nil, usagef("--backends %q: unknown backend %q (allowed: %s)", workload.Cut(flag, 80), workload.Cut(name, 80), strings.Join(reg.Names(), ", "))
			}
			if err := requireInstalled(reg, name); err != nil {
				return nil, err
			}
			if variant != "" {
				info, err := startBounded(ctx, sess, name, limit)
				if err != nil {
					return nil, err
				}
				if _, err := info.CapabilitiesOf(variant); err != nil {
					return nil, usagef("--backends %q: %v", workload.Cut(flag, 80), err)
				}
			}
			out = append(out, full)
		}
		return out, nil
	}
	var out, unlisted []string
	for _, name := range reg.Names() {
		if m, _ := reg.Manifest(name); len(m.Workloads) > 0 && !slices.Contains(m.Workloads, wl) {
			unlisted = append(unlisted, name)
			continue // the manifest says it does not implement this workload
		}
		if err := requireInstalled(reg, name); err != nil {
			fmt.Fprintf(a.Stderr, "skipping %s: %s\n", name, backend.ErrorText(err))
			continue
		}
		info, err := startBounded(ctx, sess, name, limit)
		if err != nil {
			fmt.Fprintf(a.Stderr, "skipping %s: %s\n", name, backend.ErrorText(err))
			continue
		}
		for _, full := range info.Names() {
			_, variant := backend.SplitName(full)
			if caps, err := info.CapabilitiesOf(variant); err == nil {
				if _, ok := caps.For(wl); ok {
					out = append(out, full)
				}
			}
		}
	}
	if len(out) == 0 {
		if len(unlisted) > 0 {
			// a backend that implements a new workload but whose plugin.json
			// does not list it is never started: say where to look
			return nil, fmt.Errorf("no backend available implements workload %s (not started, as their plugin.json \"workloads\" does not list %s: %s); "+
				"run ./setup.sh to install them, or name one with --backends", wl, wl, strings.Join(unlisted, ", "))
		}
		return nil, fmt.Errorf("no backend available implements workload %s; run ./setup.sh to install them", wl)
	}
	return out, nil
}

// startBounded starts a backend (or finds it started) within limit.
func startBounded(ctx context.Context, sess *bench.Session, name string, limit bound) (backend.Info, error) {
	sctx, cancel := context.WithTimeout(ctx, limit.d)
	defer cancel()
	type started struct {
		info backend.Info
		err  error
	}
	done := make(chan started, 1)
	go func() {
		_, info, err := sess.Backend(sctx, name)
		done <- started{info, err}
	}()
	select {
	case s := <-done:
		return s.info, s.err
	case <-sctx.Done():
		// The start goes on in its goroutine; the plugin's process group is
		// killed when xbench exits (Pdeathsig), so nothing outlives us.
		return backend.Info{}, fmt.Errorf("backend %s did not start within %s %s", name, limit.flag, limit.d)
	}
}

// requireInstalled is a usage error naming the missing Python packages and
// the command that installs them.
func requireInstalled(reg *registry.Registry, name string) error {
	missing, err := reg.Missing(name)
	if err != nil {
		return err
	}
	if len(missing) == 0 {
		return nil
	}
	return usagef("--backends %s: backend %s needs the Python package(s) %s, not installed for %s; run ./setup.sh (it installs them into .venv), or --env nix to use its nix shell",
		name, name, strings.Join(missing, ", "), runner.Python(reg.Root()))
}

func newRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// sessionMeta is what every result of this invocation records about where it ran.
func sessionMeta(root string, reg *registry.Registry) bench.Meta {
	host, _ := os.Hostname()
	// XBENCH_GIT_COMMIT, where a script sets it, wins over the tree's git:
	// the device machine gets a copy of the working tree whose .git may be
	// the one of an older commit (on 2026-11-26 every result made there
	// read the session's first commit, "-dirty"), while the script knows
	// the commit its binaries were built from (bin/COMMIT).
	commit := os.Getenv("XBENCH_GIT_COMMIT")
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output(); err == nil && commit == "" {
		commit = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			commit += "-dirty"
		}
	}
	_, nixRev := runner.Provenance(reg.EnvMode(), root)
	return bench.Meta{GitCommit: commit, Host: host, NixRev: nixRev, Settings: compileCacheSetting()}
}
