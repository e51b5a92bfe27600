package plugin

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// fakeBackend records what reached it, so the test can check that the gRPC
// layer carries every field both ways.
type fakeBackend struct {
	gotRun    backend.RunRequest
	gotExport backend.ExportRequest
	result    result.Result
}

var _ backend.Backend = (*fakeBackend)(nil)

func (f *fakeBackend) Info(context.Context) (backend.Info, error) {
	return backend.Info{Name: "fake", Description: "d",
		Capabilities: backend.Capabilities{Workloads: []backend.WorkloadCaps{
			{Workload: "ttt", Phases: []string{"forward"}, Devices: []string{"cpu"},
				Values: map[string][]string{"ttt_type": {"linear"}, "dtype": {"float32"}, "backbone": {"transformer"}},
				Max:    map[string]int64{"seq_len": 1 << 40}}, // above 2^32: the wire must not cut it
			{Workload: "gemm", Phases: []string{"forward"}, Devices: []string{"cpu", "cuda"}},
		}},
		Variants: []backend.Variant{{Name: "fast", Capabilities: backend.Capabilities{Workloads: []backend.WorkloadCaps{
			{Workload: "ttt", Phases: []string{"forward"}, Devices: []string{"cuda"}, Values: map[string][]string{"dtype": {"bfloat16"}}}}}}}}, nil
}

func (f *fakeBackend) Run(_ context.Context, req backend.RunRequest) (result.Result, error) {
	f.gotRun = req
	return f.result, nil
}

func (f *fakeBackend) Export(_ context.Context, req backend.ExportRequest) (backend.ExportResponse, error) {
	f.gotExport = req
	return backend.ExportResponse{Status: result.StatusOK, Device: result.Device{Kind: "cpu", Name: "n", Count: 1}}, nil
}

func connect(t *testing.T, impl backend.Backend) backend.Backend {
	t.Helper()
	client, _ := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{PluginName: &GRPCBackendPlugin{Impl: impl}})
	t.Cleanup(func() { client.Close() })
	raw, err := client.Dispense(PluginName)
	if err != nil {
		t.Fatal(err)
	}
	return raw.(backend.Backend)
}

var cfg = ttt.Config{ModelSize: "tiny", TTTType: "mlp", Backward: true, InnerOnly: false, Batch: 2,
	SeqLen: 64, MiniBatch: 16, Dtype: "bfloat16", Backbone: "transformer", Warmup: 3, Repeats: 4}.Result()

func TestRoundTripOverGRPC(t *testing.T) {
	fake := &fakeBackend{result: result.Result{Backend: "fake", Status: result.StatusOK, Config: cfg,
		Device: result.Device{Kind: "cpu", Count: 1}, SamplesMs: []float64{1.5, 2.5, 3, 4}, CompileMs: 9,
		NumParams: 7, Env: result.Env{Framework: "go", Timing: "wall"}}}
	b := connect(t, fake)
	ctx := context.Background()

	info, err := b.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := fake.Info(ctx)
	if !reflect.DeepEqual(info, want) {
		t.Errorf("info over gRPC = %+v, want %+v", info, want)
	}

	// The timing mode travels too: both fields, so neither can be dropped.
	req := backend.RunRequest{Workload: "ttt", Variant: "fast", Device: "cuda", Config: cfg, Mode: result.Mode{ColdCache: true, CUDAGraph: true}}
	res, err := b.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fake.gotRun, req) {
		t.Errorf("run request arrived as %+v, want %+v", fake.gotRun, req)
	}
	if !reflect.DeepEqual(res, fake.result) {
		t.Errorf("result came back as %+v, want %+v", res, fake.result)
	}

	ex := backend.ExportRequest{Workload: "ttt", Variant: "fast", Device: "cpu", Config: cfg, WeightsPath: "/w", InputsPath: "/i", OutputPath: "/o"}
	resp, err := b.Export(ctx, ex)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fake.gotExport, ex) || resp.Status != result.StatusOK || resp.Device.Name != "n" {
		t.Errorf("export: arrived %+v, answered %+v", fake.gotExport, resp)
	}
}

func TestInvalidResultIsRejectedByField(t *testing.T) {
	fake := &fakeBackend{result: result.Result{Backend: "fake", Status: "splendid", Config: cfg, Device: result.Device{Kind: "cpu"}, SamplesMs: []float64{}}}
	_, err := connect(t, fake).Run(context.Background(), backend.RunRequest{Workload: "ttt", Config: cfg})
	if err == nil || !strings.Contains(err.Error(), "/status") || !strings.Contains(err.Error(), "ok") {
		t.Fatalf("want a schema error naming /status, got %v", err)
	}
}

// Integers were once cut to 32 bits on the wire. Parameters travel as
// decimal strings and warmup/repeats as int64, so values past 2^32 (and
// past 2^31, the int32 sign bit) must reach the backend unchanged, through
// Run, RunBatch and Export alike. The harness never resolves such values;
// this checks the transport alone.
func TestLargeIntegersSurviveTheWire(t *testing.T) {
	big := cfg.With("seq_len", "4294967360") // 2^32 + 64
	big = big.With("batch", "9223372036854775807")
	big.Warmup, big.Repeats = 1<<31+5, 1<<32+1
	fake := &fakeBackend{}
	fake.result = result.Result{Backend: "fake", Status: result.StatusOK, Config: big,
		Device: result.Device{Kind: "cpu", Count: 1}, SamplesMs: []float64{1}, Env: result.Env{Framework: "go", Timing: "wall"},
		PeakMemoryBytes: 1<<40 + 3, NumParams: 1<<33 + 1}
	b := connect(t, fake)
	ctx := context.Background()
	check := func(what string, got result.Config) {
		t.Helper()
		if got.Get("seq_len") != "4294967360" || got.Get("batch") != "9223372036854775807" ||
			got.Warmup != 1<<31+5 || got.Repeats != 1<<32+1 || !reflect.DeepEqual(got, big) {
			t.Errorf("%s: config arrived as %+v, want %+v", what, got, big)
		}
	}

	req := backend.RunRequest{Workload: "ttt", Device: "cpu", Config: big, Mode: result.Mode{ColdCache: true}}
	res, err := b.Run(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	check("run request", fake.gotRun.Config)
	check("run result", res.Config)
	if res.PeakMemoryBytes != 1<<40+3 || res.NumParams != 1<<33+1 {
		t.Errorf("result counts came back as %d bytes, %d params", res.PeakMemoryBytes, res.NumParams)
	}

	br, ok := b.(backend.BatchRunner)
	if !ok {
		t.Fatal("the gRPC client does not implement BatchRunner")
	}
	fake.gotRun = backend.RunRequest{}
	rs, err := br.RunBatch(ctx, []backend.RunRequest{req})
	if err != nil || len(rs) != 1 {
		t.Fatalf("run batch: %d results, %v", len(rs), err)
	}
	check("batch request", fake.gotRun.Config)
	if fake.gotRun.Mode != req.Mode {
		t.Errorf("batch request mode arrived as %+v, want %+v", fake.gotRun.Mode, req.Mode)
	}
	check("batch result", rs[0].Config)

	if _, err := b.Export(ctx, backend.ExportRequest{Workload: "ttt", Device: "cpu", Config: big, OutputPath: "/o"}); err != nil {
		t.Fatal(err)
	}
	check("export request", fake.gotExport.Config)

	info, err := b.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m := info.Capabilities.Workloads[0].Max["seq_len"]; m != 1<<40 {
		t.Errorf("capability max seq_len came back as %d, want 2^40", m)
	}
}

// cannotBatch is a backend whose run_batch is missing (a JSON-lines program
// that answered "unknown op").
type cannotBatch struct{ fakeBackend }

func (*cannotBatch) RunBatch(context.Context, []backend.RunRequest) ([]result.Result, error) {
	return nil, fmt.Errorf("%w: unknown op 'run_batch'", backend.ErrCannotBatch) // as subprocess words it
}

// A backend that cannot batch is told apart over the wire from one whose
// batch failed: the first becomes backend.ErrCannotBatch again on the host
// (its cells then go one by one), the second stays an error of the batch.
func TestRunBatchDeclinedCrossesTheWire(t *testing.T) {
	req := backend.RunRequest{Workload: "ttt", Device: "cpu", Config: cfg}
	_, err := connect(t, &cannotBatch{}).(backend.BatchRunner).RunBatch(context.Background(), []backend.RunRequest{req})
	if !errors.Is(err, backend.ErrCannotBatch) || !strings.Contains(err.Error(), "unknown op 'run_batch'") ||
		strings.Count(err.Error(), backend.ErrCannotBatch.Error()) != 1 {
		t.Errorf("declined batch: %v, want backend.ErrCannotBatch with the backend's words, said once", err)
	}
	_, err = connect(t, &failingBatch{}).(backend.BatchRunner).RunBatch(context.Background(), []backend.RunRequest{req})
	if err == nil || errors.Is(err, backend.ErrCannotBatch) || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("failed batch: %v, want the batch's own error", err)
	}
}

type failingBatch struct{ fakeBackend }

func (*failingBatch) RunBatch(context.Context, []backend.RunRequest) ([]result.Result, error) {
	return nil, errors.New("run_batch: backend process exited (exit status 3)")
}
