// Package burnstylehip is the native backend: the TTT model, the GEMM, the
// attention and the scan written from their specs in Go, served to the
// harness as a plugin process. Its CPU path for TTT is its own model
// (package cpu/ttt), graded like every backend against the harness's
// float64 reference, which no code of the plugin binary imports
// (imports_test.go). Package cpu holds its pure-Go gemm, attention and
// scan; a GPU engine (plugins/burnstyle-hip/gpu) plugs into the same seam
// (engine.go).
package burnstylehip

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload/ttt"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/host"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/name"
)

// Name is the backend's name in results and on the command line.
const Name = name.Backend

// Native implements backend.Backend; cmd/burnstyle-hip serves it to the
// harness over go-plugin's gRPC, in a process of its own.
type Native struct {
	engines map[string]engineFactory // by device kind
}

var _ backend.Backend = (*Native)(nil)

// New returns the backend with its CPU engine and the GPU engines (package
// gpu), which fail to start, and so decline, where no GPU library is found.
func New() *Native {
	return &Native{engines: map[string]engineFactory{"cpu": newCPUEngine,
		"cuda": gpuFactory("cuda"), "rocm": gpuFactory("rocm")}}
}

// Info names the backend and declares what it can run.
func (n *Native) Info(context.Context) (backend.Info, error) {
	return backend.Info{
		Name:         Name,
		Description:  "native Go implementation of the spec: pure-Go CPU path (all cores, float32/float64; forward and training step, transformer and mamba) and a no-cgo CUDA/HIP path with fused inner-loop kernels (float32/bfloat16)",
		Capabilities: n.capabilities(),
		Variants:     variants,
	}, nil
}

// Run times one configuration per docs/protocol.md: the first call is
// compile_ms, then warmup untimed calls, then repeats wall-clock samples.
// The model uses the spec's default weights (seed 0) and random inputs.
func (n *Native) Run(ctx context.Context, req backend.RunRequest) (res result.Result, err error) {
	res = result.Result{Backend: Name, Config: req.Config, SamplesMs: []float64{}, Env: env(),
		Device: result.Device{Kind: requestedKind(req.Device)}}
	if msg := n.unsupported(req.Variant, req.Device, req.Config); msg != "" {
		res.Status, res.Message = result.StatusUnsupported, msg
		return res, nil
	}
	if msg := modeUnsupported(req); msg != "" {
		res.Status, res.Message = result.StatusUnsupported, msg
		return res, nil
	}
	res.Mode = req.Mode
	w, _ := workloadOf(req.Config.Workload) // unsupported answered any other
	return w.run(n, ctx, req, res)
}

// runTTT times a TTT configuration on the engine that admits it.
func (n *Native) runTTT(ctx context.Context, req backend.RunRequest, res result.Result) (result.Result, error) {
	cfg := ttt.From(req.Config)
	s, e, status, msg := n.admit(req.Device, cfg)
	if status != result.StatusOK {
		res.Status, res.Message = status, msg
		return res, nil
	}
	if err := invalid(cfg); err != nil {
		return res, fmt.Errorf("run %s: %w", Name, err)
	}
	res.Device = e.Device()

	var weights, inputs map[string]tensorfile.Tensor
	weights, inputs, res.NumParams = defaultTensors(cfg, s)

	var j job
	if err := safely(func() (err error) { j, err = e.Prepare(cfg, s, weights, inputs); return err }); err != nil {
		res.Status, res.Message = result.StatusFailed, "prepare: "+err.Error()
		return res, nil
	}
	defer j.Close()
	weights, inputs = nil, nil // let the collector take the F32 copies before timing

	samples, compileMs, err := timeSteps(ctx, j, cfg.Warmup, cfg.Repeats)
	if err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("run %s: %w", Name, ctx.Err())
		}
		res.Status, res.Message = result.StatusFailed, err.Error()
		return res, nil
	}
	res.Status, res.SamplesMs, res.CompileMs = result.StatusOK, samples, compileMs
	if dt, ok := j.(deviceTimedJob); ok {
		res.Env.Timing = dt.Timing()
	}
	res.PeakMemoryBytes = j.MemoryBytes()
	return res, nil
}

// defaultTensors are what a timed (or profiled) call runs on: the spec's
// default weights (seed 0) and random inputs, with the parameter count.
func defaultTensors(cfg ttt.Config, s ttt.Size) (weights, inputs map[string]tensorfile.Tensor, params int64) {
	if cfg.InnerOnly {
		return ttt.InitParams(ttt.InnerParams(s, cfg.TTTType, cfg.MiniBatch), 0, false),
			ttt.RandomInnerInputs(0, cfg.Batch, s.Heads, cfg.SeqLen, s.HeadDim),
			ttt.NumInnerParams(s, cfg.TTTType, cfg.MiniBatch)
	}
	return ttt.DefaultWeights(s, cfg.TTTType, cfg.MiniBatch, backboneOf(cfg), 0),
		map[string]tensorfile.Tensor{"tokens": ttt.RandomTokens(0, cfg.Batch, cfg.SeqLen, s.Vocab)},
		ttt.NumParams(s, cfg.TTTType, cfg.MiniBatch, backboneOf(cfg))
}

// timeSteps runs the protocol's timing sequence on a prepared job.
func timeSteps(ctx context.Context, j job, warmup, repeats int) (samples []float64, compileMs float64, err error) {
	timed, byDevice := j.(deviceTimedJob)
	step := func(what string, i int) (ms float64, err error) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		start := time.Now()
		if byDevice {
			err = safely(func() (err error) { ms, err = timed.StepMs(); return err })
		} else {
			err = safely(j.Step)
			ms = float64(time.Since(start).Nanoseconds()) / 1e6
		}
		if err != nil {
			return 0, fmt.Errorf("%s call %d: %w", what, i, err)
		}
		return ms, nil
	}
	if compileMs, err = step("first", 0); err != nil {
		return nil, 0, err
	}
	for i := 0; i < warmup; i++ {
		if _, err := step("warmup", i); err != nil {
			return nil, 0, err
		}
	}
	samples = make([]float64, 0, repeats)
	for i := 0; i < repeats; i++ {
		ms, err := step("timed", i)
		if err != nil {
			return nil, 0, err
		}
		samples = append(samples, ms)
	}
	return samples, compileMs, nil
}

// Export runs the model once on the given weights and inputs and writes
// "logits" (forward), "out" (inner-only) or, for the training step, the
// logits and grad.<param> of every parameter; F64 for float64, else F32.
func (n *Native) Export(ctx context.Context, req backend.ExportRequest) (backend.ExportResponse, error) {
	resp := backend.ExportResponse{Device: result.Device{Kind: requestedKind(req.Device)}}
	if msg := n.unsupported(req.Variant, req.Device, req.Config); msg != "" {
		resp.Status, resp.Message = result.StatusUnsupported, msg
		return resp, nil
	}
	w, _ := workloadOf(req.Config.Workload) // unsupported answered any other
	return w.export(n, ctx, req, resp)
}

// exportTTT runs a TTT configuration once on the given weights and inputs.
func (n *Native) exportTTT(ctx context.Context, req backend.ExportRequest, resp backend.ExportResponse) (backend.ExportResponse, error) {
	cfg := ttt.From(req.Config)
	s, e, status, msg := n.admit(req.Device, cfg)
	if status != result.StatusOK {
		resp.Status, resp.Message = status, msg
		return resp, nil
	}
	if err := invalid(cfg); err != nil {
		return resp, fmt.Errorf("export %s: %w", Name, err)
	}
	resp.Device = e.Device()
	weights, err := tensorfile.Read(req.WeightsPath)
	if err != nil {
		return resp, fmt.Errorf("export %s: %w", Name, err)
	}
	inputs, err := tensorfile.Read(req.InputsPath)
	if err != nil {
		return resp, fmt.Errorf("export %s: %w", Name, err)
	}
	var j job
	if err := safely(func() (err error) { j, err = e.Prepare(cfg, s, weights, inputs); return err }); err != nil {
		return resp, fmt.Errorf("export %s: %w", Name, err)
	}
	defer j.Close()
	if err := ctx.Err(); err != nil {
		return resp, fmt.Errorf("export %s: %w", Name, err)
	}
	if err := safely(j.Step); err != nil {
		resp.Status, resp.Message = result.StatusFailed, "forward: "+err.Error()
		return resp, nil
	}
	outs, err := jobOutputs(j)
	if err != nil {
		return resp, fmt.Errorf("export %s: %w", Name, err)
	}
	if err := tensorfile.Write(req.OutputPath, outs); err != nil {
		return resp, fmt.Errorf("export %s: %w", Name, err)
	}
	resp.Status = result.StatusOK
	return resp, nil
}

// jobOutputs is everything a job's last step made, by name.
func jobOutputs(j job) (map[string]tensorfile.Tensor, error) {
	if oj, ok := j.(outputsJob); ok {
		return oj.Outputs()
	}
	name, out, err := j.Output()
	if err != nil {
		return nil, err
	}
	return map[string]tensorfile.Tensor{name: out}, nil
}

// admit picks the engine for a TTT request's device (the capabilities were
// checked already) and lets the engine check its own limits; for "auto"
// the first engine (GPU before CPU) that accepts cfg wins.
func (n *Native) admit(device string, cfg ttt.Config) (ttt.Size, engine, result.Status, string) {
	s, err := ttt.LookupSize(cfg.ModelSize)
	if err != nil {
		return s, nil, result.StatusUnsupported, err.Error()
	}
	engines, msg := n.candidates(device)
	auto := device == "" || device == "auto"
	status := result.StatusUnsupported
	for _, e := range engines { // "auto" falls through to the next device
		if status, msg = e.Check(cfg, s); status == result.StatusOK {
			return s, e, status, ""
		}
		if auto && e.Device().Kind != "cpu" && autoStaysOnGPU(cfg) {
			return s, nil, status, msg + "; --device cpu runs it on the CPU"
		}
	}
	return s, nil, status, msg
}

// autoStaysOnGPU says whether, under --device auto on a machine with a GPU,
// the GPU declining cfg is the answer rather than a run on the CPU: a timed
// run of the training step or of the mamba backbone there is meant for the
// GPU, and the CPU path would stand in for it in the comparison at a
// fraction of the speed. float64 still falls back, as it always has: it is
// the reference precision, which only the CPU path computes.
func autoStaysOnGPU(cfg ttt.Config) bool {
	return cfg.Dtype != "float64" && (cfg.Backward || backboneOf(cfg) == "mamba")
}

// requestedKind is the device kind to report before an engine is chosen.
func requestedKind(device string) string {
	if device == "cuda" || device == "rocm" {
		return device
	}
	return "cpu"
}

func env() result.Env {
	return result.Env{
		Framework: "go",
		Versions:  map[string]string{"go": runtime.Version()},
		Timing:    "wall clock (time.Now) around each call",
		Host:      host.Hostname(),
	}
}

// safely turns a panic in numeric code into an error, so one bad
// configuration fails its own result instead of the backend process.
func safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}
