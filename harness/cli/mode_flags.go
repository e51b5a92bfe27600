package cli

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/workload"
)

// modeFlags are the timing modes of run and sweep (docs/protocol.md,
// "Timing modes"): every configuration of one invocation is timed the same way.
type modeFlags struct {
	coldCache, cudaGraph bool
	fs                   *pflag.FlagSet
	wl                   workload.Workload
}

// register adds the mode flags; wl's default decides --cold-cache when the
// command line (or a sweep file) does not set it.
func (m *modeFlags) register(fs *pflag.FlagSet, wl workload.Workload) {
	m.fs, m.wl = fs, wl
	help := "flush the last-level cache before every timed call (a write over a buffer larger than it, not in the sample)"
	if workload.ColdCacheByDefault(wl) {
		help += "; on by default for " + wl.Name() + ": --cold-cache=false times warm"
	}
	fs.BoolVar(&m.coldCache, "cold-cache", false, help)
	fs.BoolVar(&m.cudaGraph, "cuda-graph", false, "capture the call as a CUDA graph once and time its replays (backends that cannot answer unsupported)")
}

func (m *modeFlags) mode() result.Mode {
	cold := m.coldCache
	if m.fs != nil && !m.fs.Changed("cold-cache") && m.wl != nil {
		cold = workload.ColdCacheByDefault(m.wl)
	}
	return result.Mode{ColdCache: cold, CUDAGraph: m.cudaGraph}
}

// checkFolderMode refuses to add results of one mode to a sweep folder that
// holds results of another: a resumed sweep would take the old mode's cells
// as done, and the folder would mix two kinds of number under one name.
func checkFolderMode(dir string, mode result.Mode) error {
	if _, err := os.Stat(dir); err != nil {
		return nil // a new folder
	}
	rs, _, err := store.ReadAll(dir)
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Mode != mode {
			return usagef("--results %q holds results timed %s (e.g. %s) and this sweep times %s (allowed: a folder of one mode; use another --results)",
				workload.Cut(dir, 80), r.Mode, workload.Cut(fmt.Sprintf("%s %s", r.Backend, workload.Label(r.Config)), 80), mode)
		}
	}
	return nil
}
