package ttt_test

import (
	"testing"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"
)

// The cluster kernel's exchanges (inner_cluster.cuh) against the float64
// model. 3 (st.async onto the receivers' mbarriers; the emulator fails a
// wait that nothing completes) is the default, which the other emulator
// tests run (the forward, chunked, and the training step's trace included);
// here the two barrier exchanges stay right: 1 (two cluster barriers a
// step) and 2 (one, the LayerNorm gradient's sums formed before the row
// statistics), 1 also without a cluster (3 runs as 2 there, which
// TestEmuLinearCluster's 1-CTA case covers).
func TestEmuClusterExchange(t *testing.T) {
	d := openEmu(t)
	for _, x := range []int{1, 2} {
		verify(t, d, "125m", "linear", "float32", true, 48, gputtt.Options{InnerVariant: 3, ClusterSize: 4, Exchange: x})
	}
	verify(t, d, "tiny", "linear", "bfloat16", false, 64, gputtt.Options{ClusterSize: 2, Exchange: 1, Chunks: 2})
	verify(t, d, "tiny", "linear", "float32", true, 64, gputtt.Options{InnerVariant: 3, ClusterSize: 1, Exchange: 1})
}
