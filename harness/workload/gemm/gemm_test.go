package gemm

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
)

// resolve is Resolve with the default phase and timing counts.
func resolve(t *testing.T, set map[string]string) result.Config {
	t.Helper()
	cfg, err := workload.Resolve(Workload{}, "", set, 3, 10)
	if err != nil {
		t.Fatalf("Resolve(%v): %v", set, err)
	}
	return cfg
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		phase   string
		set     map[string]string
		want    map[string]string // checked when wantErr is empty
		wantErr []string          // every one must appear in the error
	}{
		{name: "defaults", set: nil,
			want: map[string]string{"m": "512", "n": "512", "k": "512", "batch": "1", "layout": "nn", "dtype": "float32"}},
		{name: "alias and canonical int", set: map[string]string{"dtype": "bf16", "m": " 0064", "layout": "tt"},
			want: map[string]string{"m": "64", "n": "512", "k": "512", "batch": "1", "layout": "tt", "dtype": "bfloat16"}},
		{name: "m zero", set: map[string]string{"m": "0"}, wantErr: []string{"--m", `"0"`, "1 to 1048576"}},
		{name: "k too large", set: map[string]string{"k": "1048577"}, wantErr: []string{"--k", "1 to 1048576"}},
		{name: "batch too large", set: map[string]string{"batch": "65537"}, wantErr: []string{"--batch", "1 to 65536"}},
		{name: "bad layout", set: map[string]string{"layout": "nx"}, wantErr: []string{"--layout", `"nx"`, "nn, nt, tn, tt"}},
		{name: "bad dtype", set: map[string]string{"dtype": "float64"},
			wantErr: []string{"--dtype", "float32, tf32, bfloat16, float16, float8_e4m3"}},
		{name: "unknown parameter", set: map[string]string{"seq_len": "8"}, wantErr: []string{"--seq-len", "--m, --n, --k"}},
		{name: "no backward phase", phase: workload.PhaseBackward, wantErr: []string{"--phase", "forward"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := workload.Resolve(Workload{}, tc.phase, tc.set, 3, 10)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("accepted %v", tc.set)
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not name %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(cfg.Params, tc.want) || cfg.Phase != workload.PhaseForward || cfg.Workload != "gemm" {
				t.Errorf("got %+v, want params %v", cfg, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	const max = "1048576"
	tests := []struct {
		name    string
		set     map[string]string
		wantErr []string // empty: accepted
	}{
		{"all at their bounds overflow", map[string]string{"batch": "65536", "m": max, "n": max, "k": max},
			[]string{"--batch --m --n --k", `"65536 1048576 1048576 1048576"`, "2^63"}},
		{"A too large", map[string]string{"m": max, "k": max, "n": "1"},
			[]string{"--batch --m --k", "1099511627776 elements", "17179869184"}},
		{"B too large", map[string]string{"batch": "32", "k": max, "n": max, "m": "1"},
			[]string{"--batch --k --n", "B holds"}},
		{"C too large", map[string]string{"m": max, "n": max, "k": "1"},
			[]string{"--batch --m --n", "C holds"}},
		// 2^14·2^10·2^10 is exactly 2^34: the limit itself is allowed.
		{"A at the limit", map[string]string{"batch": "16384", "m": "1024", "k": "1024", "n": "1"}, nil},
		{"one past the limit", map[string]string{"batch": "16385", "m": "1024", "k": "1024", "n": "1"},
			[]string{"--batch --m --k", "17180917760 elements"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := workload.Resolve(Workload{}, "", tc.set, 0, 1)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			var ve *workload.ValueError
			if !errors.As(err, &ve) {
				t.Errorf("error is %T, want one wrapping *workload.ValueError: bad input, exit 2", err)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

func TestLabelAndShapes(t *testing.T) {
	tests := []struct {
		set     map[string]string
		label   string
		a, b, c []int
	}{
		{map[string]string{"m": "4096", "n": "4096", "k": "4096", "dtype": "bfloat16"},
			"4096x4096x4096 nn bfloat16", []int{1, 4096, 4096}, []int{1, 4096, 4096}, []int{1, 4096, 4096}},
		{map[string]string{"m": "2", "n": "3", "k": "5", "batch": "8", "layout": "nt"},
			"2x3x5 b8 nt float32", []int{8, 2, 5}, []int{8, 3, 5}, []int{8, 2, 3}},
		{map[string]string{"m": "2", "n": "3", "k": "5", "layout": "tn", "dtype": "e4m3"},
			"2x3x5 tn float8_e4m3", []int{1, 5, 2}, []int{1, 5, 3}, []int{1, 2, 3}},
		{map[string]string{"m": "2", "n": "3", "k": "5", "layout": "tt"},
			"2x3x5 tt float32", []int{1, 5, 2}, []int{1, 3, 5}, []int{1, 2, 3}},
	}
	for _, tc := range tests {
		cfg := resolve(t, tc.set)
		if got := (Workload{}).Label(cfg); got != tc.label {
			t.Errorf("Label(%v) = %q, want %q", tc.set, got, tc.label)
		}
		a, b, c := Shapes(cfg)
		if !slices.Equal(a, tc.a) || !slices.Equal(b, tc.b) || !slices.Equal(c, tc.c) {
			t.Errorf("Shapes(%v) = %v %v %v, want %v %v %v", tc.set, a, b, c, tc.a, tc.b, tc.c)
		}
	}
}
