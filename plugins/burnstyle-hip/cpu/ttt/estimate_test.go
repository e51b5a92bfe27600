package ttt

import (
	"fmt"
	"testing"

	"github.com/xbench/xbench/harness/workload/ttt"
)

// TestEstimateBytesBoundsAStep runs steps of small models that vary one
// dimension at a time and checks that EstimateBytes is at least what the
// step allocated (parameters, tape, gradients) and not more than three
// times it, so the admission check neither lets a run overflow memory
// nor turns away runs that fit.
func TestEstimateBytesBoundsAStep(t *testing.T) {
	base := ttt.Size{Hidden: 64, Layers: 1, Heads: 4, HeadDim: 16, MLP: 128, Vocab: 256}
	with := func(edit func(*ttt.Size)) ttt.Size { s := base; edit(&s); return s }
	sizes := []struct {
		name    string
		s       ttt.Size
		B, L, K int
	}{
		{"base", base, 1, 32, 16},
		{"two sequences", base, 2, 32, 16},
		{"two layers", with(func(s *ttt.Size) { s.Layers = 2 }), 1, 32, 16},
		{"wide vocab", with(func(s *ttt.Size) { s.Vocab = 1024 }), 1, 32, 16},
		{"wide mlp", with(func(s *ttt.Size) { s.MLP = 512 }), 1, 32, 16},
		{"more heads", with(func(s *ttt.Size) { s.Hidden, s.Heads = 128, 8 }), 1, 32, 16},
		{"wider heads", with(func(s *ttt.Size) { s.Hidden, s.HeadDim = 128, 32 }), 1, 32, 16},
		{"mini-batch 32", base, 1, 64, 32},
		{"mini-batch 4", base, 1, 32, 4},
	}
	for _, sz := range sizes {
		for _, v := range []struct {
			tttType, backbone string
			backward, inner   bool
		}{
			{"linear", "transformer", false, false}, {"mlp", "mamba", false, false},
			{"linear", "mamba", true, false}, {"mlp", "transformer", true, false},
			{"linear", "", false, true}, {"mlp", "", false, true},
		} {
			name := fmt.Sprintf("%s/%s/%s/backward=%v/inner=%v", sz.name, v.tttType, v.backbone, v.backward, v.inner)
			cfg := ttt.Config{TTTType: v.tttType, Backbone: v.backbone, Batch: sz.B, SeqLen: sz.L, MiniBatch: sz.K,
				Dtype: "float32", Backward: v.backward, InnerOnly: v.inner}
			got := stepBytes(t, cfg, sz.s)
			est := EstimateBytes(cfg, sz.s)
			if est < got || est > 3*got {
				t.Errorf("%s: estimate %d bytes for a step that allocated %d", name, est, got)
			}
		}
	}
}

// stepBytes runs one step of cfg at float32 and returns the model's Bytes.
func stepBytes(t *testing.T, cfg ttt.Config, s ttt.Size) int64 {
	t.Helper()
	if cfg.InnerOnly {
		m, err := NewInner[float32](s, cfg.TTTType, cfg.MiniBatch, ttt.InitParams(ttt.InnerParams(s, cfg.TTTType, cfg.MiniBatch), 0, false))
		if err != nil {
			t.Fatal(err)
		}
		n := cfg.Batch * s.Heads * cfg.SeqLen * s.HeadDim
		x, gate := make([]float32, n), make([]float32, n/s.HeadDim)
		if _, err := m.InnerOnly(x, x, x, gate, cfg.Batch, cfg.SeqLen); err != nil {
			t.Fatal(err)
		}
		return m.Bytes() + 4*int64(3*n+n/s.HeadDim)
	}
	backbone := cfg.Backbone
	if backbone == "" {
		backbone = "transformer"
	}
	m, err := NewModel[float32](s, cfg.TTTType, backbone, cfg.MiniBatch, ttt.DefaultWeights(s, cfg.TTTType, cfg.MiniBatch, backbone, 0))
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int32, cfg.Batch*cfg.SeqLen)
	if cfg.Backward {
		_, _, err = m.TrainStep(ids, cfg.Batch, cfg.SeqLen)
	} else {
		_, err = m.Forward(ids, cfg.Batch, cfg.SeqLen)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m.Bytes() + 4*int64(len(ids))
}
