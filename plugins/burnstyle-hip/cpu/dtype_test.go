package cpu

import (
	"strings"
	"testing"
)

func TestRounding(t *testing.T) {
	x := []float32{1.00390625, 3.14159} // 1 + 2^-8: bfloat16 rounds it to 1 (nearest even), float16 keeps it
	for _, tc := range []struct {
		dtype   string
		want    []float32
		wantErr string
	}{
		{"float32", x, ""},
		{"tf32", x, ""},
		{"bfloat16", []float32{1, 3.140625}, ""},
		{"float16", []float32{1.00390625, 3.140625}, ""},
		{"float64", nil, `unknown dtype "float64" (allowed: bfloat16, float16, float32, tf32)`},
	} {
		round, err := Rounding(tc.dtype)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.dtype, err, tc.wantErr)
			}
			continue
		}
		got := Rounded(round, x)
		for i := range got {
			if err != nil || got[i] != tc.want[i] {
				t.Errorf("%s: %v (error %v), want %v", tc.dtype, got, err, tc.want)
				break
			}
		}
	}
	if x[0] != 1.00390625 {
		t.Error("Rounded changed its input")
	}
}
