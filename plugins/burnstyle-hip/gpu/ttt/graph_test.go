package ttt_test

import (
	"slices"
	"testing"

	gputtt "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/ttt"

	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/check"
)

// TestEmuGraphReplay: a forward captured at its first call and replayed
// afterwards computes what launching every kernel eagerly computes, bit for
// bit, including for tokens set after the capture (the graph reads the
// input buffer at each replay, not at capture), flat and chunked (the lanes
// fork from and join back to the capture's stream; the emulator refuses
// work sent to the legacy stream during a capture, as a device does).
func TestEmuGraphReplay(t *testing.T) {
	d := openEmu(t)
	for _, tc := range []struct {
		typ, dtype string
		opt        gputtt.Options
	}{
		{"linear", "float32", gputtt.Options{}},
		{"linear", "bfloat16", gputtt.Options{Chunks: 3}},
		{"mlp", "float32", gputtt.Options{}},
	} {
		cfg := check.Config("tiny", tc.typ, tc.dtype, false, 2, 64)
		s, w, in, err := check.Inputs(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		second := ttt.RandomTokens(4, cfg.Batch, cfg.SeqLen, s.Vocab)
		outputs := map[bool][][]float32{}
		for _, eager := range []bool{false, true} {
			opt := tc.opt
			opt.Eager = eager
			m, err := gputtt.NewModelWith(d, cfg, w, opt)
			if err != nil {
				t.Fatal(err)
			}
			for i, tok := range []any{in["tokens"], second} {
				ids, _ := tok.(interface{ Int32s() ([]int32, error) }).Int32s()
				if err := m.SetTokens(ids); err != nil {
					t.Fatal(err)
				}
				if err := m.Poison(); err != nil {
					t.Fatal(err)
				}
				if ms, err := m.Run(); err != nil || ms < 0 {
					t.Fatalf("%s %s %+v call %d: %v ms, %v", tc.typ, tc.dtype, opt, i, ms, err)
				}
				out, _, err := m.Output()
				if err != nil {
					t.Fatal(err)
				}
				outputs[eager] = append(outputs[eager], out)
			}
			t.Logf("%s", m.Describe())
			m.Close()
		}
		for i := range outputs[true] {
			if !slices.Equal(outputs[false][i], outputs[true][i]) {
				t.Errorf("%s %s %+v call %d: the graph replay's logits differ from the eager launches'", tc.typ, tc.dtype, tc.opt, i)
			}
		}
		if slices.Equal(outputs[false][0], outputs[false][1]) {
			t.Errorf("%s %s %+v: other tokens gave the same logits: the replay did not read the new input", tc.typ, tc.dtype, tc.opt)
		}
	}
}
