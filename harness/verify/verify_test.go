package verify

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
)

func TestCompare(t *testing.T) {
	rel, maxAbs := Compare([]float64{1, 2, 2}, []float64{1, 2, 3})
	if want := 1 / math.Sqrt(14); math.Abs(rel-want) > 1e-15 || maxAbs != 1 {
		t.Errorf("Compare = %v, %v; want %v, 1", rel, maxAbs, want)
	}
	if rel, _ := Compare([]float64{1, math.NaN()}, []float64{1, 1}); !math.IsNaN(rel) {
		t.Errorf("NaN output gave rel %v, want NaN", rel)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	want := tensorfile.F64([]int{2, 2}, []float64{1, 2, 3, 4})
	write := func(name string, m map[string]tensorfile.Tensor) string {
		p := filepath.Join(dir, name)
		if err := tensorfile.Write(p, m); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, dtype, path, tensor string
		wantVerdict, wantMsg      string
	}{
		{"float32 close", "float32", write("a", map[string]tensorfile.Tensor{"logits": tensorfile.F32([]int{2, 2}, []float32{1, 2, 3, 4.0001})}), "logits", Pass, ""},
		{"float32 too far", "float32", write("b", map[string]tensorfile.Tensor{"logits": tensorfile.F32([]int{2, 2}, []float32{1, 2, 3, 4.1})}), "logits", Fail, ""},
		{"bfloat16 looser", "bfloat16", write("c", map[string]tensorfile.Tensor{"logits": tensorfile.F32([]int{2, 2}, []float32{1, 2, 3, 4.1})}), "logits", Pass, ""},
		{"NaN never passes", "bfloat16", write("d", map[string]tensorfile.Tensor{"logits": tensorfile.F32([]int{2, 2}, []float32{1, 2, 3, float32(math.NaN())})}), "logits", Fail, ""},
		{"wrong shape", "float32", write("e", map[string]tensorfile.Tensor{"logits": tensorfile.F32([]int{4}, []float32{1, 2, 3, 4})}), "logits", Fail, "shape"},
		{"missing tensor", "float32", write("f", map[string]tensorfile.Tensor{"out": tensorfile.F32([]int{2, 2}, []float32{1, 2, 3, 4})}), "logits", Error, `no tensor "logits"`},
		{"missing file", "float32", filepath.Join(dir, "none"), "logits", Error, "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The caller sets the workload's tolerance; Check grades by it.
			tol := ttt.Workload{}.Tolerance(result.Config{Workload: "ttt", Params: map[string]string{"dtype": tt.dtype}})
			row := Check(Row{Backend: "b", Dtype: tt.dtype, Tolerance: tol}, tt.path, tt.tensor, want)
			if row.Verdict != tt.wantVerdict || !strings.Contains(row.Message, tt.wantMsg) {
				t.Fatalf("verdict %s (%q), want %s containing %q", row.Verdict, row.Message, tt.wantVerdict, tt.wantMsg)
			}
			if row.Tolerance != tol {
				t.Errorf("tolerance %v, want %v", row.Tolerance, tol)
			}
		})
	}
}

// Several tensors of one output (attention's out and gradients): the row
// carries the worst, the message lists each, and one bad tensor fails the
// row however good the others are.
func TestCheckAll(t *testing.T) {
	dir := t.TempDir()
	ref := tensorfile.F64([]int{2}, []float64{3, 4})
	want := map[string]tensorfile.Tensor{"out": ref, "dq": ref, "dk": ref}
	names := []string{"out", "dq", "dk"}
	write := func(name string, dk []float32) string {
		p := filepath.Join(dir, name)
		m := map[string]tensorfile.Tensor{
			"out": tensorfile.F32([]int{2}, []float32{3, 4}),
			"dq":  tensorfile.F32([]int{2}, []float32{3, 4.05}),
			"dk":  tensorfile.F32([]int{2}, dk),
		}
		if err := tensorfile.Write(p, m); err != nil {
			t.Fatal(err)
		}
		return p
	}
	row := CheckAll(Row{Tolerance: 0.02}, write("ok", []float32{3, 4}), names, want)
	if row.Verdict != Pass || math.Abs(row.RelL2-0.01) > 1e-6 || !strings.HasPrefix(row.Message, "worst dq; out 0.00e+00, dq 1.00e-02, dk 0.00e+00") {
		t.Errorf("all close: %s rel %v %q", row.Verdict, row.RelL2, row.Message)
	}
	row = CheckAll(Row{Tolerance: 0.02}, write("bad", []float32{3, 5}), names, want)
	if row.Verdict != Fail || !strings.HasPrefix(row.Message, "worst dk") {
		t.Errorf("dk off by 0.2: %s %q", row.Verdict, row.Message)
	}
	row = CheckAll(Row{Tolerance: 0.02}, write("nan", []float32{3, float32(math.NaN())}), names, want)
	if row.Verdict != Fail || !math.IsNaN(row.RelL2) {
		t.Errorf("NaN in dk: %s rel %v", row.Verdict, row.RelL2)
	}
	row = CheckAll(Row{Tolerance: 0.02}, write("ok2", []float32{3, 4}), []string{"out", "dv"}, want)
	if row.Verdict != Error || !strings.Contains(row.Message, `no tensor "dv"`) {
		t.Errorf("missing dv: %s %q", row.Verdict, row.Message)
	}
}
