// Package sweep runs many configurations on many backends into one results
// folder: cheap cells first, larger cells skipped once a smaller one ran out
// of memory or time, resumable after any interruption, spread over GPUs or
// SLURM array tasks. Each cell is one file, written once and atomically.
package sweep

import (
	"sort"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/workload"
)

// Cell is one backend (or variant) on one device and configuration.
type Cell struct {
	Backend string        `json:"backend"`
	Device  string        `json:"device"` // as requested: auto, cpu, cuda, rocm
	Config  result.Config `json:"config"`
}

// Key is the cell's file name without ".json". The requested device is part
// of it because one folder may hold a sweep over several devices, and
// store.Key (backend and configuration) alone would let them collide.
func (c Cell) Key() string {
	return store.Key(c.Backend, c.Config) + "__" + c.Device
}

// Cost is the workload's size rank of the cell: a rough, unitless estimate
// of how long and how much memory it takes. It orders the sweep so cheap
// cells run first; it is never reported.
func (c Cell) Cost() float64 { return workload.RankOf(c.Config) }

// Order sorts cells cheapest first; ties (and equal costs across backends)
// fall back to the key, so every process computes the same order. Shards
// depend on that.
func Order(cells []Cell) {
	type keyed struct {
		c    Cell
		cost float64
		key  string
	}
	ks := make([]keyed, len(cells))
	for i, c := range cells {
		ks[i] = keyed{c, c.Cost(), c.Key()}
	}
	sort.SliceStable(ks, func(i, j int) bool {
		if ks[i].cost != ks[j].cost {
			return ks[i].cost < ks[j].cost
		}
		return ks[i].key < ks[j].key
	})
	for i := range ks {
		cells[i] = ks[i].c
	}
}

// AtLeastAsLarge reports whether big needs at least the memory and time of
// small: same backend and device, and a configuration at least as large by
// workload.AtLeastAsLarge.
func AtLeastAsLarge(big, small Cell) bool {
	return big.Backend == small.Backend && big.Device == small.Device &&
		workload.AtLeastAsLarge(big.Config, small.Config)
}

// Shard returns the cells of shard index (0-based) of count, taking every
// count-th cell of the ordered plan so each shard gets cheap and expensive
// cells alike.
func Shard(ordered []Cell, index, count int) []Cell {
	if count <= 1 {
		return ordered
	}
	var out []Cell
	for i := index; i < len(ordered); i += count {
		out = append(out, ordered[i])
	}
	return out
}
