package plugin

import (
	"context"
	"reflect"
	"strings"
	"testing"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
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
		Capabilities: backend.Capabilities{Workloads: []string{"ttt"}, TTTTypes: []string{"linear"}, Phases: []string{"forward"},
			Dtypes: []string{"float32"}, Devices: []string{"cpu"}, Backbones: []string{"transformer"}},
		Variants: []backend.Variant{{Name: "fast", Capabilities: backend.Capabilities{Dtypes: []string{"bfloat16"}}}}}, nil
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

var cfg = result.Config{Workload: "ttt", ModelSize: "tiny", TTTType: "mlp", Backward: true, InnerOnly: false, Batch: 2,
	SeqLen: 64, MiniBatch: 16, Dtype: "bfloat16", Backbone: "transformer", Warmup: 3, Repeats: 4}

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

	req := backend.RunRequest{Workload: "ttt", Variant: "fast", Device: "cuda", Config: cfg}
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
