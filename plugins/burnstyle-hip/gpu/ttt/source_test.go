package ttt

import (
	"strings"
	"testing"
)

func TestSourceHasEveryKernel(t *testing.T) {
	for _, g := range []geometry{{F: 64, KB: 16, NT: 256}, {F: 64, KB: 16, NT: 256, Variant: 1},
		{F: 64, KB: 16, NT: 256, MLP: true}} {
		src := g.source()
		for _, k := range []string{"xb_embed", "xb_rmsnorm", "xb_layernorm", "xb_prep", "xb_swiglu",
			"xb_gemm_nn", "xb_gemm_nt", "xb_gemm_nn_acc", g.innerName(),
			"xb_conv_res", "xb_prep_mamba", "xb_layernorm_gate"} {
			if !strings.Contains(src, "XB_EXPORT("+k+")") {
				t.Errorf("%+v: kernel %s missing from the program", g, k)
			}
		}
		if strings.Contains(src, "#include") {
			t.Error("the program includes a header; NVRTC and hipRTC builds must need none")
		}
	}
	d := strings.Join(geometry{F: 16, KB: 8, NT: 128, BF16: true, BaseLR: 0.1}.defines(), " ")
	for _, want := range []string{"-DXB_BF16=1", "-DXB_F=16", "-DXB_KB=8", "-DXB_NT=128", "-DXB_BASE_LR=0.1"} {
		if !strings.Contains(d, want) {
			t.Errorf("defines %q lack %q", d, want)
		}
	}
}

// The shared-memory sizes at 125m decide whether the kernels fit an H100
// (227 KB per block); they are worked out by hand in ../../docs/FLOOR.md.
func TestSharedMemoryAt125m(t *testing.T) {
	lin := geometry{F: 64, KB: 16, NT: 256, Variant: 1}
	lin2 := geometry{F: 64, KB: 16, NT: 256}
	mlp := geometry{F: 64, KB: 16, NT: 256, MLP: true}
	if got := lin.smemBytes(); got != 71680 {
		t.Errorf("linear smem = %d, want 71680", got)
	}
	if got := lin2.smemBytes(); got != 58624 {
		t.Errorf("linear (variant 2) smem = %d, want 58624", got)
	}
	if got := mlp.smemBytes(); got != 221888 || got > 232448 {
		t.Errorf("mlp smem = %d, want 221888 (H100 limit 232448)", got)
	}
}

func TestPickThreads(t *testing.T) {
	for _, tc := range []struct {
		g    geometry
		want int
	}{
		{geometry{F: 64, KB: 16}, 256},
		{geometry{F: 16, KB: 16}, 256},
		{geometry{F: 64, KB: 16, MLP: true}, 512},
		{geometry{F: 16, KB: 16, MLP: true}, 256},
		{geometry{F: 16, KB: 16, Variant: 1}, 256},
		{geometry{F: 96, KB: 16, Variant: 1}, 384},
		{geometry{F: 96, KB: 16}, 256},
		{geometry{F: 96, KB: 16, MLP: true}, 384},
		{geometry{F: 64, KB: 8}, 256},
	} {
		got, err := pickThreads(tc.g, 0)
		if err != nil || got != tc.want {
			t.Errorf("%+v: %d, %v; want %d", tc.g, got, err, tc.want)
		}
	}
	if _, err := pickThreads(geometry{F: 64, KB: 16, Variant: 1}, 100); err == nil {
		t.Error("100 threads accepted")
	}
	if _, err := pickThreads(geometry{F: 64, KB: 6}, 0); err == nil {
		t.Error("mini-batch 6 accepted")
	}
	if _, err := pickThreads(geometry{F: 64, KB: 16, MLP: true}, 512); err != nil {
		t.Errorf("512 threads for mlp: %v", err)
	}
}
