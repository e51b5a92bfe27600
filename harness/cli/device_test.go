package cli

import (
	"testing"
)

func TestParseDevice(t *testing.T) {
	const allowed = "(allowed: auto, cpu, cuda, rocm, or cuda:N / rocm:N to pin GPU N (0 to 1023))"
	tests := []struct {
		in, kind, gpu, err string
	}{
		{"auto", "auto", "", ""},
		{"cpu", "cpu", "", ""},
		{"cuda", "cuda", "", ""},
		{"rocm", "rocm", "", ""},
		{"cuda:0", "cuda", "0", ""},
		{"cuda:7", "cuda", "7", ""},
		{"rocm:3", "rocm", "3", ""},
		{"cuda:1023", "cuda", "1023", ""},
		{"cuda:", "", "", `--device "cuda:" is not allowed ` + allowed},
		{"cuda:-1", "", "", `--device "cuda:-1" is not allowed ` + allowed},
		{"cuda:x", "", "", `--device "cuda:x" is not allowed ` + allowed},
		{"cuda:1024", "", "", `--device "cuda:1024" is not allowed ` + allowed},
		{"cuda:01", "", "", `--device "cuda:01" is not allowed ` + allowed},
		{"cuda:+1", "", "", `--device "cuda:+1" is not allowed ` + allowed},
		{"cuda: 1", "", "", `--device "cuda: 1" is not allowed ` + allowed},
		{"cuda:0:1", "", "", `--device "cuda:0:1" is not allowed ` + allowed},
		{"cpu:0", "", "", `--device "cpu:0" is not allowed ` + allowed},
		{"auto:0", "", "", `--device "auto:0" is not allowed ` + allowed},
		{"tpu", "", "", `--device "tpu" is not allowed ` + allowed},
		{"CUDA:0", "", "", `--device "CUDA:0" is not allowed ` + allowed},
		{"", "", "", `--device "" is not allowed ` + allowed},
	}
	for _, tt := range tests {
		kind, gpu, err := parseDevice(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err || ExitCode(err) != 2 {
				t.Errorf("parseDevice(%q) = %q, %q, %v; want exit 2 with %q", tt.in, kind, gpu, err, tt.err)
			}
			continue
		}
		if err != nil || kind != tt.kind || gpu != tt.gpu {
			t.Errorf("parseDevice(%q) = %q, %q, %v; want %q, %q", tt.in, kind, gpu, err, tt.kind, tt.gpu)
		}
	}
}

// TestPinOfLists: a sweep's --device list pins one GPU or none; the
// values may not disagree, since the backend processes are pinned once.
func TestPinOfLists(t *testing.T) {
	tests := []struct {
		in, gpu string
		ok      bool
	}{
		{"cuda", "", true},
		{"cpu,cuda", "", true},
		{"cuda:2", "2", true},
		{"cuda:2,rocm:2", "2", true},
		{"cuda:0,cuda:1", "", false},
		{"cpu,cuda:1", "", false},
		{"cuda:1,cuda", "", false},
		{"cuda:x", "", false},
	}
	for _, tt := range tests {
		f := workloadFlags{list: true, device: tt.in}
		gpu, err := f.pin()
		if tt.ok != (err == nil) || gpu != tt.gpu || (err != nil && ExitCode(err) != 2) {
			t.Errorf("pin of %q = %q, %v; want %q, ok %v (errors exit 2)", tt.in, gpu, err, tt.gpu, tt.ok)
		}
	}
}
