package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/attention"
	"github.com/xbench/xbench/harness/workload/view"
)

// attentionPoint is one synthetic result: a backend at a seq_len and
// batch, ok with a median of ms, or another status.
type attentionPoint struct {
	backend       string
	seqLen, batch int
	phase         string
	status        result.Status
	ms            float64
}

// attentionFolder writes pts (causal h8 d64 bfloat16 attention) and,
// when calibrated, the synthetic device's ceilings, and loads the folder.
func attentionFolder(t *testing.T, pts []attentionPoint, calibrated bool) *Report {
	t.Helper()
	dir := t.TempDir()
	var rs []result.Result
	for _, p := range pts {
		cfg, err := workload.Resolve(attention.Workload{}, p.phase, map[string]string{"batch": fmt.Sprint(p.batch), "heads": "8",
			"seq_len": fmt.Sprint(p.seqLen), "head_dim": "64", "causal": "true", "dtype": "bfloat16"}, 1, 3)
		if err != nil {
			t.Fatal(err)
		}
		r := result.Result{SchemaVersion: result.SchemaVersion, RunID: "r", Backend: p.backend, Status: p.status, Config: cfg,
			Device: sweeptest.Device, SamplesMs: []float64{}, Env: result.Env{Framework: p.backend, Timing: "events"},
			Timestamp: sweeptest.Timestamp}
		if p.status == result.StatusOK {
			r.SamplesMs = []float64{p.ms, p.ms, p.ms}
		}
		rs = append(rs, sweeptest.Finalize(r))
	}
	if err := sweeptest.Write(dir, rs); err != nil {
		t.Fatal(err)
	}
	if calibrated {
		if err := sweeptest.WriteCalibration(dir, sweeptest.Calibration("r")); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Load(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fixedTokens is two backends at three lengths with batch·seq_len = 4096,
// forward only, jax out of memory at the longest.
func fixedTokens() []attentionPoint {
	var pts []attentionPoint
	for _, l := range []int{1024, 2048, 4096} {
		pts = append(pts, attentionPoint{"pytorch", l, 4096 / l, "forward", result.StatusOK, 0.1})
		st := result.StatusOK
		if l == 4096 {
			st = result.StatusOOM
		}
		pts = append(pts, attentionPoint{"jax", l, 4096 / l, "forward", st, 0.3})
	}
	return pts
}

func TestThroughputVsSeqLen(t *testing.T) {
	withBackward := fixedTokens()
	for _, l := range []int{1024, 2048} {
		withBackward = append(withBackward, attentionPoint{"pytorch", l, 4096 / l, "backward", result.StatusOK, 0.3})
	}
	// Two batches at each length: batch must split the panels, else one
	// length would have two points.
	var twoBatches []attentionPoint
	for _, b := range []int{1, 2} {
		for _, l := range []int{1024, 2048} {
			twoBatches = append(twoBatches, attentionPoint{"pytorch", l, b, "forward", result.StatusOK, float64(b*l) / 1e4})
		}
	}
	cases := []struct {
		name       string
		pts        []attentionPoint
		calibrated bool
		titles     []string
		points     []int // per panel, over every backend
		caption    []string
		notCaption []string
	}{
		{"batch follows seq_len", fixedTokens(), false, []string{"h8 d64 causal bfloat16 forward"}, []int{5},
			[]string{"batch is not held fixed", "jax: 1 oom", "No calibration"}, []string{"% of the calibrated"}},
		{"phases are panels", withBackward, true, []string{"h8 d64 causal bfloat16 forward", "h8 d64 causal bfloat16 backward"}, []int{5, 2},
			[]string{"bfloat16 700 TFLOP/s", "jax: 1 oom"}, []string{"No calibration"}},
		{"batch fixed per panel", twoBatches, false, []string{"b1 h8 d64 causal bfloat16 forward", "b2 h8 d64 causal bfloat16 forward"}, []int{2, 2},
			nil, []string{"batch is not held fixed", "Left out"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := attentionFolder(t, tc.pts, tc.calibrated)
			panels := seqLenPanels(t, r)
			if len(panels) != len(tc.titles) {
				t.Fatalf("%d panels, want %d: %+v", len(panels), len(tc.titles), panels)
			}
			for i, p := range panels {
				if p.Title != tc.titles[i] {
					t.Errorf("panel %d is %q, want %q", i, p.Title, tc.titles[i])
				}
				n := 0
				for _, s := range p.Lines {
					n += len(s.X)
				}
				if n != tc.points[i] {
					t.Errorf("panel %q has %d points, want %d", p.Title, n, tc.points[i])
				}
			}
			c := chartsByName(t, r)["throughput-vs-seq-len"]
			if c == nil {
				t.Fatal("no throughput-vs-seq-len chart")
			}
			if got := len(c.Panels) * 2; got < len(panels) {
				t.Errorf("%d rows of panels for %d panels", len(c.Panels), len(panels))
			}
			for _, want := range tc.caption {
				if !strings.Contains(c.Caption, want) {
					t.Errorf("caption lacks %q: %s", want, c.Caption)
				}
			}
			for _, no := range tc.notCaption {
				if strings.Contains(c.Caption, no) {
					t.Errorf("caption says %q: %s", no, c.Caption)
				}
			}
		})
	}
}

// The drawn points are the workload's TFLOP/s, the y axis reads them as
// percent of the calibrated peak too, and one legend above the panels
// names each backend once.
func TestThroughputVsSeqLenPoints(t *testing.T) {
	r := attentionFolder(t, fixedTokens(), true)
	c := chartsByName(t, r)["throughput-vs-seq-len"]
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	// pytorch at 1024: 4·4·8·1024²·64/2 FLOPs in 0.1 ms is 42.9 TFLOP/s,
	// 6% of the synthetic 700; at 4096 (batch 1) 171.8, 25%: the best.
	// The axis runs to 1.05 x 171.8 in steps of 50: 150 is 21% of 700.
	for _, want := range []string{">150 (21%)</text>", ">1024</text>", ">4096</text>", "<title>pytorch: 171.8 at seq_len (query positions) 4096"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	for _, b := range []string{"pytorch", "jax"} {
		if n := strings.Count(string(svg), ">"+b+"</text>"); n != 1 {
			t.Errorf("%s named %d times in the chart's legends, want once (one legend for the panels)", b, n)
		}
	}
}

// The committed H100 attention sweep gets the chart, with the llm suite's
// six head configurations in both phases as twelve panels, and every
// other chart but TTT's; the HTML names jax's out-of-memory cells.
func TestAttentionSweepReport(t *testing.T) {
	r, err := Load(filepath.Join("..", "..", "results", "h100-attention", "sweep"), "")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "report.html")
	if _, err := r.Write(out); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"throughput-vs-seq-len", "backward-forward", "ratio-heatmap", "feasibility", "roofline"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(out), "report-"+name+".svg")); err != nil {
			t.Errorf("no %s chart: %v", name, err)
		}
	}
	for _, name := range []string{"time-vs-seq-len", "throughput-vs-size"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(out), "report-"+name+".svg")); err == nil {
			t.Errorf("a TTT chart %s for attention results", name)
		}
	}
	if n := len(seqLenPanels(t, r)); n != 12 {
		t.Errorf("%d panels, want 6 head configurations x 2 phases", n)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Throughput against sequence length", "batch is not held fixed", "jax: ", "oom", "backward at 2.5x (attention)"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// seqLenPanels are the panels of attention's throughput chart as the
// workload describes them, from r's results.
func seqLenPanels(t *testing.T, r *Report) []view.Panel {
	t.Helper()
	for _, s := range r.workloadSections() {
		if s.Chart != nil && s.Chart.Name == "throughput-vs-seq-len" {
			return s.Chart.Panels
		}
	}
	return nil
}
