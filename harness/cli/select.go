package cli

import (
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

// selectBackends turns --backends into full names. Named backends must
// exist and have their Python packages; by default every backend whose
// packages are present runs, with all its variants.
func selectBackends(ctx context.Context, a *App, reg *registry.Registry, sess *bench.Session, flag string) ([]string, error) {
	if flag != "" {
		var out []string
		for _, full := range strings.Split(flag, ",") {
			full = strings.TrimSpace(full)
			name, _ := backend.SplitName(full)
			if _, ok := reg.Manifest(name); !ok {
				return nil, usagef("--backends %q: unknown backend %q (allowed: %s)", flag, name, strings.Join(reg.Names(), ", "))
			}
			if err := requireInstalled(reg, name); err != nil {
				return nil, err
			}
			out = append(out, full)
		}
		return out, nil
	}
	var out []string
	for _, name := range reg.Names() {
		if err := requireInstalled(reg, name); err != nil {
			fmt.Fprintf(a.Stderr, "skipping %s: %v\n", name, err)
			continue
		}
		_, info, err := sess.Backend(ctx, name)
		if err != nil {
			fmt.Fprintf(a.Stderr, "skipping %s: %v\n", name, err)
			continue
		}
		out = append(out, info.Names()...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no backend is available; run ./setup.sh to install them")
	}
	return out, nil
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
	commit := ""
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
			commit += "-dirty"
		}
	}
	if commit == "" {
		commit = os.Getenv("XBENCH_GIT_COMMIT") // set where the tree travels without .git
	}
	_, nixRev := runner.Provenance(reg.EnvMode(), root)
	return bench.Meta{GitCommit: commit, Host: host, NixRev: nixRev}
}
