package attention

import (
	"fmt"
	"strings"
	"testing"

	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// TestWGMMASelect states when the Hopper kernel runs: sm_90 exactly, 16-bit
// dtypes, head dim 64 or 128, and no knob asking for the mma.sync kernel;
// everything else keeps the kernel it had.
func TestWGMMASelect(t *testing.T) {
	base := Spec{AttentionShape: cpu.AttentionShape{Batch: 4, Heads: 32, KVHeads: 8, SeqLen: 4096, KVLen: 4096, HeadDim: 128, Causal: true}, Dtype: "bfloat16"}
	for _, tc := range []struct {
		name string
		edit func(*Spec)
		sm   int
		want string
	}{
		{"issue shape", func(*Spec) {}, 90, "xa_attention_wgmma"},
		{"float16 d64", func(s *Spec) { s.Dtype, s.HeadDim = "float16", 64 }, 90, "xa_attention_wgmma"},
		{"sm_80", func(*Spec) {}, 80, "xa_attention_mma"},
		{"sm_100", func(*Spec) {}, 100, "xa_attention_mma"},
		{"float32", func(s *Spec) { s.Dtype = "float32" }, 90, "xa_attention_fwd"},
		{"d96", func(s *Spec) { s.HeadDim = 96 }, 90, "xa_attention_mma"},
		{"d256", func(s *Spec) { s.HeadDim = 256 }, 90, "xa_attention_mma"},
		{"MMASync", func(s *Spec) { s.MMASync = true }, 90, "xa_attention_mma"},
		{"PlainLoads", func(s *Spec) { s.PlainLoads = true }, 90, "xa_attention_mma"},
		{"tile knob", func(s *Spec) { s.QueryRows = 64 }, 90, "xa_attention_mma"},
		{"CUDACores", func(s *Spec) { s.CUDACores = true }, 90, "xa_attention_fwd"},
	} {
		s := base
		tc.edit(&s)
		if got := s.tiles(tc.sm).kernel(); got != tc.want {
			t.Errorf("%s (sm_%d): kernel %s, want %s", tc.name, tc.sm, got, tc.want)
		}
	}
	// A runtime without the driver's tensor maps (the emulator, an old
	// driver) keeps the mma.sync kernel on sm_90.
	r := &gpu.Runtime{ArchOpts: []string{"--gpu-architecture=sm_90"}}
	if got := base.deviceTiles(r).kernel(); got != "xa_attention_mma" {
		t.Errorf("sm_90 without tensor maps: kernel %s, want xa_attention_mma", got)
	}
}

// TestWGMMAGeometry: the kernel's layout (XW_BM, XW_BN, XW_ST from
// wgmmaTiles: 96-key tiles only for the overlapped schedule at head dim
// 128, where 128 keys would make ptxas serialize and spill), shared memory
// within sm_90's 227 KB opt-in, and the tensor maps' boxes within
// cuTensorMapEncodeTiled's limits with the 64-column inner box the
// 128-byte swizzle needs.
func TestWGMMAGeometry(t *testing.T) {
	for _, tc := range []struct {
		d              int
		serial         bool
		keyRows        int
		wantBN, wantSt int
	}{{128, false, 0, 96, 4}, {128, true, 0, 128, 3}, {64, false, 0, 128, 3}, {64, true, 0, 128, 3},
		{128, false, 64, 64, 6}, {128, false, 128, 128, 3}, {64, false, 64, 64, 6}, {128, true, 96, 96, 4}} {
		s := Spec{AttentionShape: cpu.AttentionShape{Batch: 2, Heads: 4, KVHeads: 2, SeqLen: 300, KVLen: 200, HeadDim: tc.d}, Dtype: "float16",
			WGMMAOverlap: !tc.serial, WGMMAKeyRows: tc.keyRows}
		d := tc.d
		tl := s.tiles(90)
		if tl.BM != 128 || tl.BN != tc.wantBN || tl.DP != d || tl.Stages != tc.wantSt {
			t.Errorf("%+v: tiles %+v", tc, tl)
		}
		if n := tl.smemBytes(); n > 227<<10 || n != 1024+128*d*2+2*tl.Stages*tl.BN*d*2+8*(1+3*tl.Stages) {
			t.Errorf("%+v: %d bytes of shared memory", tc, n)
		}
		q, kv := s.tiledMaps(tl.BM, tl.BN)
		if q.Dims[1] != 300 || q.Dims[2] != 8 || kv.Dims[1] != 200 || kv.Dims[2] != 4 || q.Box[0] != 64 || q.Box[1] != 128 || kv.Box[1] != uint32(tc.wantBN) {
			t.Errorf("%+v: maps q %+v kv %+v", tc, q, kv)
		}
		for _, m := range []gpu.TiledMap{q, kv} {
			if err := m.Check(); err != nil {
				t.Errorf("%+v: map %+v: %v", tc, m, err)
			}
		}
		defs := strings.Join(s.wgmmaDefines(tl), " ")
		overlap := "-DXW_OVERLAP=1"
		if tc.serial {
			overlap = "-DXW_OVERLAP=0"
		}
		for _, want := range []string{"--gpu-architecture=sm_90a", "-DXA_DT=2", "-DXW_DEBUG=0", overlap,
			fmt.Sprintf("-DXW_BN=%d -", tc.wantBN), fmt.Sprintf("-DXW_ST=%d ", tc.wantSt)} {
			if !strings.Contains(defs, want) {
				t.Errorf("%+v: defines %q lack %q", tc, defs, want)
			}
		}
	}
	for _, tc := range []struct {
		keyRows, stages int
		ok              bool
	}{{64, 0, true}, {96, 4, true}, {128, 2, true}, {80, 0, false}, {0, 1, false}, {0, 9, false}} {
		s := Spec{AttentionShape: cpu.AttentionShape{Batch: 1, Heads: 1, KVHeads: 1, SeqLen: 8, KVLen: 8, HeadDim: 128}, Dtype: "bfloat16",
			WGMMAKeyRows: tc.keyRows, WGMMAStages: tc.stages}
		if err := s.check(); (err == nil) != tc.ok {
			t.Errorf("key rows %d stages %d: check says %v, want ok %v", tc.keyRows, tc.stages, err, tc.ok)
		}
	}
	for _, tc := range []struct {
		arch     string
		sm       int
		specific bool
	}{{"sm_90a", 90, true}, {"sm_90", 90, false}, {"sm_80", 80, false}, {"gfx90a", 0, false}} {
		if sm, sp := archSM(tc.arch); sm != tc.sm || sp != tc.specific {
			t.Errorf("archSM(%q) = %d, %v; want %d, %v", tc.arch, sm, sp, tc.sm, tc.specific)
		}
	}
}
