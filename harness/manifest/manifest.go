// Package manifest reads plugins/<name>/plugin.json, the file that makes a
// folder a backend. The core never needs to change for a new backend.
package manifest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
)

// Runtimes a manifest may name.
const (
	RuntimeBuiltin = "builtin" // compiled into the xbench binary
	RuntimePython  = "python"  // entry run by the project's Python
	RuntimeExec    = "exec"    // entry (or command) run as it is
	// RuntimePlugin is a program that serves the backend over go-plugin
	// gRPC itself (harness/plugin.Serve), launched directly: the binary
	// named after the backend, built from the folder's cmd/<name> into the
	// repository's bin/ beside xbench (scripts/lib.sh build_xbench).
	RuntimePlugin = "plugin"
)

// Manifest describes one backend folder.
type Manifest struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Runtime     string   `json:"runtime"`
	Entry       string   `json:"entry,omitempty"`    // file in the folder (python, exec)
	Command     []string `json:"command,omitempty"`  // exec: argv, relative to the folder
	Requires    []string `json:"requires,omitempty"` // python: importable modules it needs
	// Workloads lists the workloads the backend implements, so listings
	// can show them without starting it; Info's capabilities are the truth.
	Workloads []string `json:"workloads,omitempty"`
	Shell     string   `json:"shell,omitempty"` // nix dev shell that reproduces it
	// CompileAhead declares that the backend answers the compile op and
	// what its compiling uses (CompileAheadGPU, CompileAheadHost), for
	// `xbench sweep --compile-ahead`; empty: it compiles where it is timed.
	CompileAhead string `json:"compile_ahead,omitempty"`
	// ProcessPerCell declares that the backend runs code the project does
	// not trust (candidate kernels): each cell gets a fresh process, ended
	// after it, so that what one cell's code changed in its process (a
	// patched clock, a replaced torch function) never reaches the next
	// cell; batches of its cells are split into single cells.
	ProcessPerCell bool   `json:"process_per_cell,omitempty"`
	Dir            string `json:"-"` // absolute folder of the manifest
}

// What a backend's ahead-of-time compile uses besides the host.
const (
	// CompileAheadGPU: compiling runs work on the GPU too (XLA's and
	// Triton's autotuning time candidate kernels there), so an ahead
	// compile never runs while a cell is timed.
	CompileAheadGPU = "gpu"
	// CompileAheadHost: compiling uses the host only and may run while
	// another cell is timed.
	CompileAheadHost = "host"
)

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Load reads and checks one manifest.
func Load(path string) (Manifest, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, fmt.Errorf("read manifest %s: %w", path, err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Manifest{}, fmt.Errorf("parse manifest %s: %w", path, err)
	}
	abs, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return Manifest{}, fmt.Errorf("manifest %s: %w", path, err)
	}
	m.Dir = abs
	if err := m.check(); err != nil {
		return Manifest{}, fmt.Errorf("manifest %s: %w", path, err)
	}
	return m, nil
}

func (m Manifest) check() error {
	if !validName.MatchString(m.Name) {
		return fmt.Errorf("name %q must match %s", m.Name, validName)
	}
	switch m.Runtime {
	case RuntimeBuiltin, RuntimePlugin:
	case RuntimePython:
		if m.Entry == "" {
			return fmt.Errorf("runtime python needs an entry (the script to run)")
		}
	case RuntimeExec:
		if m.Entry == "" && len(m.Command) == 0 {
			return fmt.Errorf("runtime exec needs an entry or a command")
		}
	default:
		return fmt.Errorf("runtime %q is not one of plugin, python, exec, builtin", m.Runtime)
	}
	switch m.CompileAhead {
	case "", CompileAheadGPU, CompileAheadHost:
	default:
		return fmt.Errorf("compile_ahead %q is not one of %s, %s (or absent)", m.CompileAhead, CompileAheadGPU, CompileAheadHost)
	}
	if m.ProcessPerCell && m.Runtime == RuntimeBuiltin {
		// A built-in backend runs inside xbench itself: there is no
		// process of its own to end, so the promise could not be kept.
		return fmt.Errorf("process_per_cell needs a backend process of its own; runtime builtin runs inside xbench (allowed with plugin, python, exec)")
	}
	return nil
}

// Argv is the command that serves the backend, before any environment
// wrapping (nix). python is the interpreter to use for python runtimes.
func (m Manifest) Argv(python string) []string {
	switch m.Runtime {
	case RuntimePython:
		return []string{python, filepath.Join(m.Dir, m.Entry), "--serve"}
	case RuntimeExec:
		if len(m.Command) > 0 {
			argv := append([]string(nil), m.Command...)
			if !filepath.IsAbs(argv[0]) && fileExists(filepath.Join(m.Dir, argv[0])) {
				argv[0] = filepath.Join(m.Dir, argv[0])
			}
			return append(argv, "--serve")
		}
		return []string{filepath.Join(m.Dir, m.Entry), "--serve"}
	}
	return nil
}

// Discover loads every plugins/*/plugin.json below dir, sorted by name.
// Two manifests with one name are an error, since results are keyed by it.
func Discover(dir string) ([]Manifest, []error, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*", "plugin.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("discover plugins in %s: %w", dir, err)
	}
	seen := map[string]string{}
	var out []Manifest
	var skipped []error
	for _, p := range paths {
		m, err := Load(p)
		if err != nil {
			// One broken backend must not hide the others.
			skipped = append(skipped, err)
			continue
		}
		if prev, dup := seen[m.Name]; dup {
			return nil, nil, fmt.Errorf("backend %q is defined twice: %s and %s", m.Name, prev, p)
		}
		seen[m.Name] = p
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, skipped, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
