package result

import "strings"

// Mode is how a result was timed beyond the default (warm caches, eager
// calls). Its zero value is that default, so a result without "mode" (every
// schema-2 result written before modes existed) reads as warm and eager.
type Mode struct {
	// ColdCache: the device's last-level cache was flushed before every
	// timed call, by a write over a buffer larger than it that is not part
	// of the sample.
	ColdCache bool `json:"cold_cache,omitempty"`
	// CUDAGraph: the call was captured once as a CUDA graph and each sample
	// is one replay.
	CUDAGraph bool `json:"cuda_graph,omitempty"`
}

// ModeWarm is the name of the zero Mode.
const ModeWarm = "warm"

// String names the mode for tables and messages: "warm", "cold-cache",
// "cuda-graph" or "cold-cache+cuda-graph" (the flags that produce it).
func (m Mode) String() string {
	var parts []string
	if m.ColdCache {
		parts = append(parts, "cold-cache")
	}
	if m.CUDAGraph {
		parts = append(parts, "cuda-graph")
	}
	if len(parts) == 0 {
		return ModeWarm
	}
	return strings.Join(parts, "+")
}

// IsZero says whether m is the default (warm, eager).
func (m Mode) IsZero() bool { return m == Mode{} }
