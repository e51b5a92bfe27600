package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/xbench/xbench/harness/compare/sweeptest"
	"github.com/xbench/xbench/harness/result"
)

// TestBenchfmtRoundTrip reads the export back with x/perf's own reader,
// the one benchstat uses, and checks every sample arrives with its keys.
func TestBenchfmtRoundTrip(t *testing.T) {
	rs := sweeptest.Sweep("run-1")
	var buf bytes.Buffer
	skipped, err := Benchfmt(&buf, rs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float64{} // name -> samples in seconds
	wantSkipped := 0
	for _, r := range rs {
		if r.Status != result.StatusOK {
			wantSkipped++
			continue
		}
		for _, ms := range r.SamplesMs {
			want[BenchName(r.Backend, r.Config)] = append(want[BenchName(r.Backend, r.Config)], ms/1000)
		}
	}
	if skipped != wantSkipped || skipped == 0 {
		t.Errorf("skipped %d, want %d (the sweep has oom results)", skipped, wantSkipped)
	}
	got := map[string][]float64{}
	rd := benchfmt.NewReader(&buf, "export.txt")
	units := 0
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt reader: %v", rec)
		case *benchfmt.UnitMetadata:
			units++
		case *benchfmt.Result:
			if rec.Iters != 1 || rec.GetConfig("device") != "cuda "+sweeptest.Device.Name || rec.GetConfig("workload") != "ttt" {
				t.Errorf("%s: iters %d, config %v", rec.Name, rec.Iters, rec.Config)
			}
			sec, ok := rec.Value("sec/op")
			tps, ok2 := rec.Value("tokens/s")
			if !ok || !ok2 {
				t.Fatalf("%s: values %v", rec.Name, rec.Values)
			}
			_, parts := rec.Name.Parts()
			if len(parts) != 9 || !strings.HasPrefix(string(parts[0]), "/backend=") {
				t.Errorf("%s: parts %q, want 9 /key=value parts", rec.Name, parts)
			}
			if math.Abs(tps*sec/4/float64(seqOf(string(rec.Name.Full())))-1) > 1e-9 {
				t.Errorf("%s: tokens/s %g does not match %g s", rec.Name, tps, sec)
			}
			got[string(rec.Name.Full())] = append(got[string(rec.Name.Full())], sec)
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	if units != 1 || len(got) != len(want) {
		t.Fatalf("read %d unit lines, %d benchmarks; want 1, %d", units, len(got), len(want))
	}
	for name, w := range want {
		g := got[name]
		if len(g) != len(w) {
			t.Errorf("%s: %d samples, want %d", name, len(g), len(w))
			continue
		}
		for i := range w {
			if math.Abs(g[i]-w[i]) > 1e-12*w[i] {
				t.Errorf("%s sample %d: %g s, want %g", name, i, g[i], w[i])
			}
		}
	}
}

func seqOf(name string) int {
	for _, p := range strings.Split(name, "/") {
		if v, ok := strings.CutPrefix(p, "seq_len="); ok {
			n := 0
			for _, c := range v {
				n = n*10 + int(c-'0')
			}
			return n
		}
	}
	return 0
}

func TestBenchName(t *testing.T) {
	gemmCfg := result.Config{Workload: "gemm", Phase: "forward", Warmup: 1, Repeats: 3,
		Params: map[string]string{"m": "4096", "n": "2048", "k": "1024", "batch": "1", "layout": "nt", "dtype": "bfloat16"}}
	tests := []struct {
		backend string
		cfg     result.Config
		want    string
	}{
		// Keys in the workload's declared order (not sorted, not map order),
		// the variant's "/" turned into "+".
		{"pytorch/compile", sweeptest.Config("125m", "mlp", true, 1024),
			"TTT/backend=pytorch+compile/phase=backward/model_size=125m/ttt_type=mlp/batch=4/seq_len=1024/mini_batch=16/dtype=float32/backbone=transformer"},
		{"triton", gemmCfg, "GEMM/backend=triton/phase=forward/m=4096/n=2048/k=1024/batch=1/layout=nt/dtype=bfloat16"},
		// A value holding "/" cannot split the name into extra keys.
		{"x", gemmCfg.With("layout", "a/b"), "GEMM/backend=x/phase=forward/m=4096/n=2048/k=1024/batch=1/layout=a+b/dtype=bfloat16"},
	}
	for _, tt := range tests {
		for i := 0; i < 5; i++ { // map iteration order must not leak into the name
			if got := BenchName(tt.backend, tt.cfg); got != tt.want {
				t.Fatalf("BenchName = %s, want %s", got, tt.want)
			}
		}
	}
}

func TestCSV(t *testing.T) {
	rs := sweeptest.Sweep("run-1")
	var buf bytes.Buffer
	if err := CSV(&buf, rs); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(rs)+1 || strings.Join(rows[0], ",") != strings.Join(CSVHeader(rs), ",") {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for i, r := range rs {
		row := rows[i+1]
		if row[col["backend"]] != r.Backend || row[col["status"]] != string(r.Status) || row[col["phase"]] != r.Config.Phase || row[col["seq_len"]] != r.Config.Get("seq_len") || row[col["model_size"]] != r.Config.Get("model_size") {
			t.Errorf("row %d: %v", i, row)
		}
		var samples []float64
		if err := json.Unmarshal([]byte(row[col["samples_ms"]]), &samples); err != nil || len(samples) != len(r.SamplesMs) {
			t.Errorf("row %d: samples_ms %q is not a JSON list of %d samples: %v", i, row[col["samples_ms"]], len(r.SamplesMs), err)
		}
		if r.Status == result.StatusOK && (row[col["median_ms"]] == "" || row[col["achieved_tflops"]] == "") {
			t.Errorf("row %d: ok result without summary or samples: %v", i, row)
		}
		if r.Status != result.StatusOK && (row[col["median_ms"]] != "" || row[col["message"]] == "") {
			t.Errorf("row %d: %s result should have no median and a message: %v", i, r.Status, row)
		}
	}
}

// TestBenchstatProjections checks that benchstat's projections see the
// keys: -col /backend splits the two backends, and .fullname minus the
// backend gives one row per configuration, so `benchstat -col /backend`
// lines them up.
func TestBenchstatProjections(t *testing.T) {
	rs := sweeptest.Sweep("run-1")
	var buf bytes.Buffer
	if _, err := Benchfmt(&buf, rs); err != nil {
		t.Fatal(err)
	}
	var pp benchproc.ProjectionParser
	col, err := pp.Parse("/backend", nil)
	if err != nil {
		t.Fatal(err)
	}
	row, err := pp.Parse(".fullname", nil)
	if err != nil {
		t.Fatal(err)
	}
	cols, rows := map[string]bool{}, map[string]bool{}
	rd := benchfmt.NewReader(&buf, "export.txt")
	for rd.Scan() {
		if res, ok := rd.Result().(*benchfmt.Result); ok {
			cols[col.Project(res).StringValues()] = true
			rows[row.Project(res).StringValues()] = true
		}
	}
	if len(cols) != 2 || !cols["pytorch"] || !cols["burnstyle-hip"] {
		t.Errorf("columns %v, want burnstyle-hip and pytorch", cols)
	}
	if len(rows) != len(sweeptest.Configs()) {
		t.Errorf("%d rows, want one per configuration (%d)", len(rows), len(sweeptest.Configs()))
	}
}

// TestExportSeparatesModels: an H100 and an H200 result (both "cuda") carry
// different device keys in benchfmt, so benchstat never puts them in one
// table, and the CSV says the model and count of each.
func TestExportSeparatesModels(t *testing.T) {
	h100 := sweeptest.Sweep("run-1")[:1]
	h200 := sweeptest.OnDevice(h100, sweeptest.H200, 0.7, "run-2")
	pair := result.Device{Kind: "cuda", Name: "NVIDIA H200", Count: 2}
	two := sweeptest.OnDevice(h100, pair, 0.5, "run-3")
	var buf bytes.Buffer
	if _, err := Benchfmt(&buf, append(append(h100, h200...), two...)); err != nil {
		t.Fatal(err)
	}
	devices := map[string]bool{}
	r := benchfmt.NewReader(&buf, "x")
	for r.Scan() {
		if res, ok := r.Result().(*benchfmt.Result); ok {
			devices[string(res.GetConfig("device"))] = true
		}
	}
	for _, want := range []string{"cuda NVIDIA H100 80GB HBM3", "cuda NVIDIA H200", "cuda NVIDIA H200 x2"} {
		if !devices[want] {
			t.Errorf("benchfmt device keys %v lack %q", devices, want)
		}
	}
	buf.Reset()
	if err := CSV(&buf, append(h200, two...)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if rows[1][col["device_name"]] != "NVIDIA H200" || rows[1][col["device_count"]] != "1" || rows[2][col["device_count"]] != "2" {
		t.Errorf("csv device columns: %v / %v", rows[1], rows[2])
	}
}
