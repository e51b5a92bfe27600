package attention

import (
	"os"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

func TestZZDump(t *testing.T) {
	s := Spec{AttentionShape: cpu.AttentionShape{Batch: 1, Heads: 1, KVHeads: 1, SeqLen: 1, KVLen: 1, HeadDim: 128, Causal: true}, Dtype: "bfloat16"}
	src, defs := s.program(s.tiles(90))
	img, _, log, err := gpu.NVRTCCompile(src, append(defs, os.Getenv("XDEF")), "sm_90a")
	if err != nil {
		t.Fatal(err, log)
	}
	t.Log(log)
	os.WriteFile("/tmp/wg.cubin", img, 0o644)
}
