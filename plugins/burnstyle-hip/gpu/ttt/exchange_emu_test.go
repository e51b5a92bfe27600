package ttt_test

import (
	"testing"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"
)

// The cluster kernel's exchanges (inner_cluster.cuh) against the float64
// model: 2 (one cluster barrier a step, the LayerNorm gradient's sums formed
// before the row statistics) and 3 (st.async onto the receivers' mbarriers;
// the emulator fails a wait that nothing completes), at 4 CTAs (125m's
// default), 2 and 8, and 1 (no cluster: 3 runs as 2); the forward too,
// which also carries the state between chunks.
func TestEmuClusterExchange(t *testing.T) {
	d := openEmu(t)
	for _, x := range []int{2, 3} {
		verify(t, d, "125m", "linear", "float32", true, 48, gputtt.Options{InnerVariant: 3, ClusterSize: 4, Exchange: x})
	}
	verify(t, d, "tiny", "linear", "float32", true, 64, gputtt.Options{InnerVariant: 3, ClusterSize: 2, Exchange: 3})
	verify(t, d, "tiny", "linear", "bfloat16", false, 64, gputtt.Options{ClusterSize: 2, Exchange: 3, Chunks: 2})
	verify(t, d, "125m", "linear", "bfloat16", true, 32, gputtt.Options{InnerVariant: 3, ClusterSize: 8, Exchange: 3})
	verify(t, d, "tiny", "linear", "float32", true, 64, gputtt.Options{InnerVariant: 3, ClusterSize: 1, Exchange: 3})
}
