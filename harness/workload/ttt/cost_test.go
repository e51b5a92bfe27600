package ttt

import (
	"testing"
)

func TestCostOf(t *testing.T) {
	tiny, _ := LookupSize("tiny")
	base := Config{ModelSize: "tiny", TTTType: "linear", Batch: 1, SeqLen: 32, MiniBatch: 16, Dtype: "float32", Backbone: "transformer"}
	// By hand for tiny (C 64, I 128, V 256, nh 4, f 16, 2 layers), T = 32.
	T := 32.0
	params := float64(NumParams(tiny, "linear", 16, "transformer"))
	fwdElems := params + 2*(18*T*64+2*T*4+(6*64+6*128)*T) + 5*T*64 + T*256
	innerElems := float64(NumInnerParams(tiny, "linear", 16)) + 4*T*4*16 + T*4

	bf16 := base
	bf16.Dtype = "bfloat16"
	bwd := base
	bwd.Backward = true
	inner := base
	inner.InnerOnly = true
	tests := []struct {
		name       string
		cfg        Config
		flops, byt float64
	}{
		{"forward float32", base, ForwardFLOPs(base, tiny), 4 * fwdElems},
		{"forward bfloat16", bf16, ForwardFLOPs(base, tiny), 2 * fwdElems},
		{"backward", bwd, 3 * ForwardFLOPs(base, tiny), 3 * 4 * fwdElems},
		{"inner-only", inner, ForwardFLOPs(inner, tiny), 4 * innerElems},
	}
	for _, tt := range tests {
		got, err := CostOf(tt.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got.FLOPs != tt.flops || got.Bytes != tt.byt {
			t.Errorf("%s: cost %+v, want flops %g bytes %g", tt.name, got, tt.flops, tt.byt)
		}
	}
	fwd, _ := CostOf(base)
	back, _ := CostOf(bwd)
	if fwd.Intensity() != back.Intensity() || fwd.Intensity() <= 0 {
		t.Errorf("intensity forward %g backward %g: want equal and positive", fwd.Intensity(), back.Intensity())
	}
	for _, bad := range []Config{{ModelSize: "2b", Dtype: "float32"}, {ModelSize: "tiny", Dtype: "int8"}} {
		if _, err := CostOf(bad); err == nil {
			t.Errorf("CostOf(%+v) accepted a bad config", bad)
		}
	}
}
