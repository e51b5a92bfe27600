// Package registry knows which backends exist (each a plugins/*/plugin.json
// folder) and starts each one as a plugin process: a go-plugin binary of
// its own, or a program xbench wraps (`xbench __plugin`).
package registry

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/manifest"
	"github.com/xbench/xbench/harness/plugin"
	"github.com/xbench/xbench/harness/runner"
)

// Builtin constructs a backend compiled into the xbench binary.
type Builtin func() backend.Backend

// Options say where backends live and how to launch them.
type Options struct {
	Root      string      // repository root (holds plugins/ and flake.nix)
	ExtraDirs []string    // more folders of backends, besides Root/plugins
	Env       runner.Mode // auto, nix, venv
	Self      string      // path of the xbench binary, for plugin children
	Logger    hclog.Logger
}

// Registry is the set of known backends.
type Registry struct {
	opts      Options
	builtins  map[string]Builtin
	manifests map[string]manifest.Manifest
	env       runner.Mode
	// Skipped are the manifests that could not be read, each error naming
	// its file: those backends are left out, the others still work.
	Skipped []error
}

// Open discovers manifests. A built-in backend needs a manifest too (runtime
// builtin), so `xbench backends` lists one kind of thing.
func Open(opts Options, builtins map[string]Builtin) (*Registry, error) {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	r := &Registry{opts: opts, builtins: builtins, manifests: map[string]manifest.Manifest{}}
	for _, dir := range append([]string{filepath.Join(opts.Root, "plugins")}, opts.ExtraDirs...) {
		ms, skipped, err := manifest.Discover(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range skipped {
			opts.Logger.Warn("skipping a backend whose manifest is bad", "error", e)
		}
		r.Skipped = append(r.Skipped, skipped...)
		for _, m := range ms {
			if m.Runtime == manifest.RuntimeBuiltin && builtins[m.Name] == nil {
				return nil, fmt.Errorf("manifest %s/plugin.json names built-in backend %q, which this binary does not contain", m.Dir, m.Name)
			}
			if prev, dup := r.manifests[m.Name]; dup {
				return nil, fmt.Errorf("backend %q is defined twice: in %s and %s", m.Name, prev.Dir, m.Dir)
			}
			r.manifests[m.Name] = m
		}
	}
	r.env = runner.Resolve(opts.Env, opts.Root, exec.LookPath)
	return r, nil
}

// Names lists every backend, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.manifests))
	for n := range r.manifests {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Manifest returns the manifest of a backend.
func (r *Registry) Manifest(name string) (manifest.Manifest, bool) {
	m, ok := r.manifests[name]
	return m, ok
}

// Root is the repository root the backends were found in.
func (r *Registry) Root() string { return r.opts.Root }

// EnvMode is how non-builtin backends are launched (nix or venv).
func (r *Registry) EnvMode() runner.Mode { return r.env }

// RunnerOf says how a backend is launched, for the result's env.runner:
// "builtin" for backends compiled into xbench, "plugin" for go-plugin
// binaries (neither runs in the nix or venv environment), else the
// resolved mode.
func (r *Registry) RunnerOf(name string) string {
	if m, ok := r.manifests[name]; ok && (m.Runtime == manifest.RuntimeBuiltin || m.Runtime == manifest.RuntimePlugin) {
		return m.Runtime
	}
	return string(r.env)
}

// PluginBinary finds the program of a runtime-plugin backend: beside the
// xbench binary first (bin/, or a test's build folder), then in the
// repository's bin/.
func (r *Registry) PluginBinary(m manifest.Manifest) (string, error) {
	var tried []string
	for _, dir := range []string{filepath.Dir(r.opts.Self), filepath.Join(r.opts.Root, "bin")} {
		p := filepath.Join(dir, m.Name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		tried = append(tried, p)
	}
	rel, err := filepath.Rel(r.opts.Root, m.Dir)
	if err != nil {
		rel = m.Dir
	}
	return "", fmt.Errorf("its plugin binary is not built (looked for %s): build it with `CGO_ENABLED=0 go build -o bin/ ./%s/cmd/%s` (./setup.sh does)",
		strings.Join(tried, " and "), filepath.ToSlash(rel), m.Name)
}

// Missing returns the Python modules a backend needs that the interpreter
// lacks. Nix shells bring their own packages, so nothing is checked there.
func (r *Registry) Missing(name string) ([]string, error) {
	m, ok := r.manifests[name]
	if !ok || m.Runtime != manifest.RuntimePython || len(m.Requires) == 0 || r.env == runner.ModeNix {
		return nil, nil
	}
	py := runner.Python(r.opts.Root)
	// find_spec of a dotted name imports its parent, which raises when the
	// parent is missing too (iree.runtime without iree): that is missing,
	// not a failed check.
	script := "import importlib.util,sys\ndef gone(m):\n try: return importlib.util.find_spec(m) is None\n except ImportError: return True\nprint(' '.join(m for m in sys.argv[1:] if gone(m)))"
	out, err := exec.Command(py, append([]string{"-c", script}, m.Requires...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("check Python packages of %q with %s: %w", name, py, err)
	}
	return strings.Fields(string(out)), nil
}

// Start launches a backend's plugin process.
func (r *Registry) Start(ctx context.Context, name string, extraEnv []string) (*plugin.Process, error) {
	m, ok := r.manifests[name]
	if !ok {
		return nil, fmt.Errorf("start backend %q: unknown (known: %s)", name, strings.Join(r.Names(), ", "))
	}
	argv := []string{r.opts.Self, "__plugin", "--name", name}
	switch m.Runtime {
	case manifest.RuntimePlugin:
		bin, err := r.PluginBinary(m)
		if err != nil {
			return nil, fmt.Errorf("start backend %q: %w", name, err)
		}
		argv = []string{bin}
	case manifest.RuntimeBuiltin:
		argv = append(argv, "--builtin")
	default:
		inner := runner.Wrap(r.env, r.opts.Root, m.Shell, m.Argv(runner.PythonFor(r.env, r.opts.Root)))
		argv = append(append(argv, "--dir", m.Dir, "--"), inner...)
	}
	env := append([]string{"XBENCH_ENV_MODE=" + string(r.env), "XBENCH_ROOT=" + r.opts.Root}, extraEnv...)
	return plugin.Launch(ctx, name, argv, env, r.opts.Logger)
}

// FindRoot walks up from dir to the folder that holds plugins/ and go.mod,
// or returns XBENCH_ROOT when set.
func FindRoot(dir string) (string, error) {
	if env := os.Getenv("XBENCH_ROOT"); env != "" {
		return filepath.Abs(env)
	}
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if isDir(filepath.Join(d, "plugins")) && isFile(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no xbench checkout (a folder with plugins/ and go.mod) at or above %s; run from the repository or set XBENCH_ROOT", dir)
		}
		d = parent
	}
}

func isDir(p string) bool  { st, err := os.Stat(p); return err == nil && st.IsDir() }
func isFile(p string) bool { st, err := os.Stat(p); return err == nil && !st.IsDir() }
