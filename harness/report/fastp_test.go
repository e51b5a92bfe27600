package report

import (
	"bytes"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/compare"
	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/verify"
	"github.com/xbench/xbench/harness/workload"
)

func TestFastP(t *testing.T) {
	mk := func(b string, seq int, ms float64) result.Result {
		c := sweeptest.Config("125m", "linear", false, seq)
		c.Repeats = 3
		r := result.Result{SchemaVersion: result.SchemaVersion, RunID: "r", Backend: b, Status: result.StatusOK, Config: c,
			Device: sweeptest.Device, SamplesMs: []float64{ms, ms, ms}, Env: result.Env{Framework: b, Timing: "wall"}}
		if ms == 0 {
			r.Status, r.SamplesMs, r.Message = result.StatusOOM, []float64{}, "oom"
		}
		return sweeptest.Finalize(r)
	}
	rs := []result.Result{
		mk("pytorch", 512, 10), mk("x", 512, 4), // 2.5x
		mk("pytorch", 1024, 10), mk("x", 1024, 8), // 1.25x
		mk("pytorch", 2048, 0), mk("x", 2048, 5), // no baseline: fast_0 only
		mk("pytorch", 4096, 10), mk("x", 4096, 0), // x oom: nothing
		mk("pytorch", 8192, 10), mk("x", 8192, 20), // slower: fast_0 only
	}
	verifyRows := func(verdict string) []verify.Row {
		return []verify.Row{{Backend: "pytorch", Dtype: "float32", Verdict: "pass"}, {Backend: "x", Dtype: "float32", Verdict: verdict}}
	}
	tests := []struct {
		name       string
		verify     []verify.Row // nil: no verify records
		x, pytorch []int
	}{
		// Nothing reads correct unless verified: without records fast_0 is 0.
		{"no verify records", nil, []int{0, 0, 0, 0}, []int{0, 0, 0, 0}},
		{"x passes", verifyRows("pass"), []int{4, 2, 1, 1}, []int{4, 0, 0, 0}},
		{"x fails", verifyRows("FAIL"), []int{0, 0, 0, 0}, []int{4, 0, 0, 0}},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		if err := sweeptest.Write(dir, rs); err != nil {
			t.Fatal(err)
		}
		if tt.verify != nil {
			if err := sweeptest.WriteVerify(dir, "r", sweeptest.Config("tiny", "linear", false, 512), tt.verify); err != nil {
				t.Fatal(err)
			}
		}
		r, err := Load(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range r.FastP() {
			want := map[string][]int{"x": tt.x, "pytorch": tt.pytorch}[f.Backend]
			if f.Total != 5 || !equal(f.Counts, want) {
				t.Errorf("%s: %s fast_p counts %v of %d, want %v of 5", tt.name, f.Backend, f.Counts, f.Total, want)
			}
		}
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestVerificationAndCalibrationChoice(t *testing.T) {
	tiny := sweeptest.Config("tiny", "linear", false, 64)
	big := sweeptest.Config("125m", "linear", false, 512)
	r := &Report{Verify: []VerifyRecord{
		{Record: verify.Record{RunID: "a", Config: tiny, Rows: []verify.Row{{Backend: "x", Dtype: "float32", Verdict: "pass"}}}},
		{Record: verify.Record{RunID: "b", Config: big, Rows: []verify.Row{{Backend: "x", Dtype: "float32", Verdict: "FAIL"}}}},
		{Record: verify.Record{RunID: "c", Config: tiny, Rows: []verify.Row{{Backend: "x", Dtype: "bfloat16", Verdict: "FAIL"}}}},
	}}
	tests := []struct {
		cfg  result.Config
		want string
		ok   bool
	}{
		{big, "FAIL", true}, // same size and length wins
		{sweeptest.Config("350m", "linear", false, 512), "FAIL", true}, // same length, newer run
		{sweeptest.Config("350m", "linear", true, 512), "", false},     // a forward verify never covers the backward
		{sweeptest.Config("125m", "mlp", false, 512), "", false},       // never verified on mlp
	}
	for _, tt := range tests {
		got, _, ok := r.Verification("x", "cuda", tt.cfg)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Verification(%v) = %q %v, want %q %v", tt.cfg, got, ok, tt.want, tt.ok)
		}
	}
	other := sweeptest.Calibration("r1")
	other.Device.Name, other.Timestamp = "other GPU", "2027-01-01T00:00:00Z"
	r.Calibrations = []backend.Calibration{other, sweeptest.Calibration("r2")}
	if c, ok := r.Calibration(sweeptest.Device); !ok || c.RunID != "r2" {
		t.Errorf("calibration of the results' device: got %q", c.RunID)
	}
	// An H200's ceilings are never an H100's: a calibration applies to its own model only.
	if c, ok := r.Calibration(result.Device{Kind: sweeptest.Device.Kind, Name: "a third GPU"}); ok {
		t.Errorf("no same-model calibration: want none, got %q on %s", c.RunID, c.Device.Name)
	}
	// A GPU's ceilings are never a CPU's.
	if c, ok := r.Calibration(result.Device{Kind: "cpu", Name: "x86"}); ok {
		t.Errorf("a cpu result got the calibration of %s %s", c.Device.Kind, c.Device.Name)
	}
}

// TestChartsShowVerification: in the standard sweep burnstyle-hip fails
// verification on mlp and pytorch passes; a third backend was never
// verified and a fourth ran in the Triton interpreter. The charts leave out
// the failed and the interpreter's results (the heat map says why), draw
// the unverified points hollow (their tooltips say so) and the verified
// ones solid, and fast_p tells incorrect from not verified.
func TestChartsShowVerification(t *testing.T) {
	dir := t.TempDir()
	if _, err := sweeptest.WriteStandard(dir, "run-1"); err != nil {
		t.Fatal(err)
	}
	var extra []result.Result
	for i, c := range sweeptest.Configs()[:4] {
		r := sweeptest.Run("run-1", sweeptest.Backend{Name: "jax", Efficiency: map[string]float64{"linear": 0.3, "mlp": 0.3}, MemoryLimitB: 80 << 30}, c, uint64(i))
		extra = append(extra, r)
		interp := sweeptest.Run("run-1", sweeptest.Backend{Name: "triton", Efficiency: map[string]float64{"linear": 0.001, "mlp": 0.001}, MemoryLimitB: 80 << 30}, c, uint64(i))
		interp.Env.Timing = "time.perf_counter on cpu, kernel in the Triton interpreter (not a performance number)"
		extra = append(extra, interp)
	}
	if err := sweeptest.Write(dir, extra); err != nil {
		t.Fatal(err)
	}
	r, err := Load(dir, "pytorch")
	if err != nil {
		t.Fatal(err)
	}
	fp := map[string]FastP{}
	for _, f := range r.FastP() {
		fp[f.Backend] = f
	}
	if f := fp["burnstyle-hip"]; f.Incorrect != 16 || f.NotVerified != 0 {
		t.Errorf("burnstyle-hip: %d incorrect, %d not verified; want the 16 mlp cells incorrect", f.Incorrect, f.NotVerified)
	}
	if f := fp["jax"]; f.Incorrect != 0 || f.NotVerified != 4 || f.NotFinished != len(r.Configs)-4 {
		t.Errorf("jax: %+v; want 4 not verified, never incorrect", f)
	}
	if f := fp["triton"]; f.Counts[1] != 0 {
		t.Errorf("triton's interpreter time entered fast_1: %+v", f)
	}
	for _, tab := range r.Tables() {
		for _, row := range tab.Rows {
			if row.Backend == "triton" && (!row.NotTimed || !math.IsNaN(row.Ratio) || !math.IsNaN(row.TFLOPs)) {
				t.Errorf("%s triton: not timed %v, ratio %v, TFLOP/s %v; want no rating of an interpreter time", tab.Label, row.NotTimed, row.Ratio, row.TFLOPs)
			}
		}
	}
	charts, err := r.Charts()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range charts {
		svg, err := c.SVG()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(c.Caption, "Left out of this chart: 16 failed verification, 4 are interpreter or emulator times") {
			t.Errorf("%s caption does not count what it left out: %q", c.Name, c.Caption)
		}
		if c.Name == "ratio-heatmap" && (!bytes.Contains(svg, []byte(">verify FAIL<")) || !bytes.Contains(svg, []byte(">not timed<"))) {
			t.Errorf("heat map does not mark failed and interpreter cells")
		}
		if c.Name == "ratio-heatmap" && !regexp.MustCompile(`<title>[^<]* / jax: [0-9.]+x \[not verified\]</title>`).Match(svg) {
			t.Errorf("ratio heat map does not mark jax's ratios not verified")
		}
		if c.Name == "time-vs-seq-len" {
			if !regexp.MustCompile(`<title>jax: [^<]*\[not verified\]</title>`).Match(svg) {
				t.Errorf("time-vs-seq-len does not mark jax's points not verified")
			}
			if !regexp.MustCompile(`<title>pytorch: [^<\[]*</title>`).Match(svg) || regexp.MustCompile(`<title>pytorch: [^<]*\[not verified\]</title>`).Match(svg) {
				t.Errorf("time-vs-seq-len does not draw pytorch's verified points solid")
			}
			if !strings.Contains(c.Caption, "hollow point") {
				t.Errorf("time-vs-seq-len's caption does not say what a hollow point is: %q", c.Caption)
			}
		}
	}
}

// TestManyBarsAreSmallMultiples: the attention sweep's 36 backward/forward
// pairs are drawn 16 a panel (3 panels), not 36 groups in one.
func TestManyBarsAreSmallMultiples(t *testing.T) {
	r, err := Load(filepath.Join("..", "..", "results", "h100-attention", "sweep"), "")
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.chartView().backwardForward()
	if err != nil || c == nil {
		t.Fatalf("backward-forward: %v %v", c, err)
	}
	if len(c.Panels) != 3 || len(c.Panels[0]) != 1 {
		t.Errorf("%d panel rows, want 3 of one panel", len(c.Panels))
	}
}

// TestVerifyCoverageByComputation: a verify covers a timed configuration
// only when it computed the same thing: every parameter that is not a
// size (layout, causal, semiring) equal, every length of one class, and a
// phase that checked it (a forward verify never covers a backward).
func TestVerifyCoverageByComputation(t *testing.T) {
	resolve := func(wl, phase string, set map[string]string) result.Config {
		t.Helper()
		w, err := workload.Lookup(wl)
		if err != nil {
			t.Fatal(err)
		}
		c, err := workload.Resolve(w, phase, set, 1, 5)
		if err != nil {
			t.Fatalf("resolve %s %v: %v", wl, set, err)
		}
		return c
	}
	scan := func(T, K, C, semiring string) result.Config {
		return resolve("scan", "forward", map[string]string{"T": T, "K": K, "C": C, "semiring": semiring})
	}
	gemm := func(m, layout string) result.Config {
		return resolve("gemm", "forward", map[string]string{"m": m, "n": m, "k": m, "layout": layout})
	}
	attn := func(seq, causal string) result.Config {
		return resolve("attention", "forward", map[string]string{"seq_len": seq, "causal": causal, "heads": "4", "batch": "2"})
	}
	pass := func(c result.Config) VerifyRecord {
		return VerifyRecord{Record: verify.Record{RunID: "v", Config: c, Rows: []verify.Row{{Backend: "x", Dtype: c.Dtype(), Verdict: "pass"}}}}
	}
	withPhase := func(c result.Config, phase string) result.Config {
		c = c.Clone()
		c.Phase = phase
		return c
	}
	r := &Report{Verify: []VerifyRecord{pass(scan("20", "4", "3", "log")), pass(gemm("1000", "nn")), pass(attn("200", "false")),
		pass(withPhase(scan("20", "4", "3", "max"), "backward"))}}
	tests := []struct {
		name string
		cfg  result.Config
		ok   bool
	}{
		{"scan T 16x the verified, larger K and C", scan("320", "20", "12", "log"), true},
		{"scan T 1024 (T=20 is not its length class)", scan("1024", "4", "3", "log"), false},
		{"scan T 4096", scan("4096", "24", "12", "log"), false},
		{"scan another semiring", scan("20", "4", "3", "entropy"), false},
		{"gemm 4096 nn", gemm("4096", "nn"), true},
		{"gemm 16384 nn (k past 16x)", gemm("16384", "nn"), false},
		{"gemm 1000 nt (another layout)", gemm("1000", "nt"), false},
		{"attention 2048 not causal", attn("2048", "false"), true},
		{"attention 4096 (past 16x)", attn("4096", "false"), false},
		{"attention 200 causal", attn("200", "true"), false},
		{"scan backward (only the forward was verified)", withPhase(scan("20", "4", "3", "log"), "backward"), false},
		{"attention backward (only the forward was verified)", withPhase(attn("200", "false"), "backward"), false},
		{"scan max forward, covered by its backward's verify", scan("64", "4", "3", "max"), true},
		{"scan max both, covered by its backward's verify", withPhase(scan("64", "4", "3", "max"), "both"), true},
	}
	for _, tt := range tests {
		if _, from, ok := r.Verification("x", "cuda", tt.cfg); ok != tt.ok {
			t.Errorf("%s: covered = %v (by %s), want %v", tt.name, ok, compare.Label(from), tt.ok)
		}
	}
}
