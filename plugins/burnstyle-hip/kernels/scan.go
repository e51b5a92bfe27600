package kernels

// The scan workload (docs/workloads/scan.md): the pure-Go scan of package
// cpu on the CPU (forward for every semiring, the backward of log and max,
// float32 and float64), and our own CUDA kernel (package gpu, forward of
// log and max); entropy and the backward on cuda are answered unsupported
// (the scan entry of the root package's workload table), never run on the
// CPU instead.

import (
	"context"
	"fmt"
	"math/rand/v2"

	gpuscan "github.com/xbench/xbench/plugins/burnstyle-hip/gpu/scan"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/tensorfile"
	"github.com/xbench/xbench/harness/workload"
	"github.com/xbench/xbench/harness/workload/scan"
	"github.com/xbench/xbench/plugins/burnstyle-hip/cpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
	"github.com/xbench/xbench/plugins/burnstyle-hip/internal/host"
)

func scanShape(cfg result.Config) cpu.ScanShape {
	s := scan.ShapeOf(cfg)
	return cpu.ScanShape{T: s.T, K: s.K, C: s.C, Batch: s.Batch, Semiring: cfg.Get("semiring")}
}

func scanBackward(cfg result.Config) bool {
	return cfg.Phase == workload.PhaseBackward || cfg.Phase == workload.PhaseBoth
}

// scanInputs are seeded values of the fixtures' kind (cumulative sums of
// normal scores; 0.5·N(0, 1) for transition and duration bias), in F.
func scanInputs[F float32 | float64](s cpu.ScanShape) (cum, trans, dur []F) {
	rng := rand.New(rand.NewPCG(1, 5))
	cum = make([]F, s.Batch*(s.T+1)*s.C)
	for b := 0; b < s.Batch; b++ {
		for c := 0; c < s.C; c++ {
			var sum float64
			for t := 1; t <= s.T; t++ {
				sum += rng.NormFloat64()
				cum[(b*(s.T+1)+t)*s.C+c] = F(sum) // uncentred: centring does not change the work
			}
		}
	}
	vec := func(n int) []F {
		v := make([]F, n)
		for i := range v {
			v[i] = F(0.5 * rng.NormFloat64())
		}
		return v
	}
	return cum, vec(s.C * s.C), vec(s.K * s.C)
}

// scanOnGPU says whether a request runs on the GPU: cuda always (a spec
// the kernel refuses is unsupported; the workload table's limits have refused the
// backward phases there), auto when a GPU opens and takes it and the phase
// is the forward (the kernel's only one: auto runs the backward on the CPU).
func scanOnGPU(device string, s gpuscan.Spec, backward bool) (bool, error) {
	switch device {
	case "cuda":
		if _, err := gpu.Shared("cuda"); err != nil {
			return true, fmt.Errorf("device \"cuda\" is not available: %w", err)
		}
		return true, gpuscan.Supported(s)
	case "auto":
		if _, err := gpu.Shared("cuda"); err == nil && !backward && gpuscan.Supported(s) == nil {
			return true, nil
		}
	}
	return false, nil
}

// runScanGPU times the forward on the GPU on inputs made as the CPU's are.
func runScanGPU(ctx context.Context, req backend.RunRequest, res result.Result, spec gpuscan.Spec) (result.Result, error) {
	d, err := gpu.Shared("cuda")
	if err != nil {
		res.Status, res.Message = result.StatusUnsupported, err.Error()
		return res, nil
	}
	cum, trans, dur := scanInputs[float64](spec.ScanShape)
	t, err := gpuscan.Time(ctx, d, spec, gpuscan.Inputs{Cum: cum, Trans: trans, Dur: dur, Lengths: scan.ShapeOf(req.Config).Lengths()},
		gpu.Calls{Warmup: req.Config.Warmup, Repeats: req.Config.Repeats})
	if err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("run %s scan: %w", backendName, ctx.Err())
		}
		res.Status, res.Message = result.StatusFailed, "scan on the GPU: "+err.Error()
		return res, nil
	}
	res.Device, res.Env.Timing = d.Info(), t.Timing
	res.Status, res.SamplesMs, res.CompileMs, res.PeakMemoryBytes = result.StatusOK, t.SamplesMs, t.CompileMs, t.PeakMemoryBytes
	res.MemoryBytes = t.MemoryBytes
	return res, nil
}

func RunScan(ctx context.Context, req backend.RunRequest, res result.Result) (result.Result, error) {
	spec := gpuscan.Spec{ScanShape: scanShape(req.Config), Dtype: req.Config.Dtype()}
	onGPU, err := scanOnGPU(req.Device, spec, scanBackward(req.Config))
	if err != nil {
		res.Status, res.Message = result.StatusUnsupported, err.Error()
		return res, nil
	}
	if onGPU {
		return runScanGPU(ctx, req, res, spec)
	}
	res.Device = host.CPUDevice()
	s, cfg := scanShape(req.Config), req.Config
	if err := s.Check(); err != nil {
		return res, fmt.Errorf("run %s scan: invalid config: %w", backendName, err)
	}
	grads := scanBackward(cfg)
	item := int64(4)
	if cfg.Dtype() == "float64" {
		item = 8
	}
	if st, msg := host.Fits(scanHostBytes(s, grads, item)); st != result.StatusOK {
		res.Status, res.Message = st, "scan on the CPU "+msg
		return res, nil
	}
	lengths := scan.ShapeOf(cfg).Lengths()
	var step func() error
	if cfg.Dtype() == "float64" {
		cum, trans, dur := scanInputs[float64](s)
		step = func() error { _, err := cpu.Scan(s, cum, trans, dur, lengths, grads); return err }
		res.MemoryBytes = scanMemory(s, grads, 8)
	} else {
		cum, trans, dur := scanInputs[float32](s)
		step = func() error { _, err := cpu.Scan(s, cum, trans, dur, lengths, grads); return err }
		res.MemoryBytes = scanMemory(s, grads, 4)
	}
	// The forward of the backward phase is not separable in the pure-Go
	// code (it recomputes the alphas it needs): backward times forward and
	// backward, as both does; the result says so.
	if cfg.Phase == workload.PhaseBackward {
		res.Warnings = append(res.Warnings, "burnstyle-hip on the CPU recomputes the forward inside the backward: backward is timed as both")
	}
	if res, err = timeOnCPU(ctx, req, res, "scan", step); err != nil || res.Status != result.StatusOK {
		return res, err
	}
	var total int64
	for _, n := range res.MemoryBytes {
		total += n
	}
	res.PeakMemoryBytes, res.Status = total, result.StatusOK
	return res, nil
}

// scanMemory counts what the pure-Go scan allocates: the inputs; state,
// alpha and u for every position of every row (the backward keeps beta and
// v too); workspace, the gradients.
func scanMemory(s cpu.ScanShape, grads bool, item int64) map[string]int64 {
	rows := int64(s.Batch) * int64(s.T+1) * int64(s.C)
	in := rows + int64(s.C*s.C+s.K*s.C)
	m := map[string]int64{"inputs": in*item + 8*int64(s.Batch), "state": 2 * rows * item}
	if s.Semiring == "entropy" || grads {
		m["state"] *= 2
	}
	if grads {
		m["workspace"] = in * item
	}
	return m
}

func ExportScan(ctx context.Context, req backend.ExportRequest, resp backend.ExportResponse) (backend.ExportResponse, error) {
	s := scanShape(req.Config)
	spec := gpuscan.Spec{ScanShape: s, Dtype: req.Config.Dtype()}
	onGPU, err := scanOnGPU(req.Device, spec, scanBackward(req.Config))
	if err != nil {
		resp.Status, resp.Message = result.StatusUnsupported, err.Error()
		return resp, nil
	}
	resp.Device = host.CPUDevice()
	if err := s.Check(); err != nil {
		return resp, fmt.Errorf("export %s scan: invalid config: %w", backendName, err)
	}
	grads := scanBackward(req.Config)
	if !onGPU {
		item := int64(4)
		if req.Config.Dtype() == "float64" {
			item = 8
		}
		if st, msg := host.Fits(scanHostBytes(s, grads, item)); st != result.StatusOK {
			resp.Status, resp.Message = st, "scan on the CPU "+msg
			return resp, nil
		}
	}
	in, err := tensorfile.Read(req.InputsPath)
	if err != nil {
		return resp, fmt.Errorf("export %s scan: %w", backendName, err)
	}
	var out map[string]tensorfile.Tensor
	if onGPU {
		resp.Device = gpu.SharedInfo()
		out, err = exportScanGPU(ctx, spec, in)
	} else if req.Config.Dtype() == "float64" {
		out, err = exportScanIn[float64](s, in, grads, tensorfile.F64)
	} else {
		out, err = exportScanIn[float32](s, in, grads, tensorfile.F32)
	}
	if err != nil {
		resp.Status, resp.Message = result.StatusFailed, "scan: "+err.Error()
		return resp, nil
	}
	if err := tensorfile.Write(req.OutputPath, out); err != nil {
		return resp, fmt.Errorf("export %s scan: %w", backendName, err)
	}
	resp.Status = result.StatusOK
	return resp, nil
}

func exportScanIn[F float32 | float64](s cpu.ScanShape, in map[string]tensorfile.Tensor, grads bool, pack func([]int, []F) tensorfile.Tensor) (map[string]tensorfile.Tensor, error) {
	vals := map[string][]F{}
	for name, n := range map[string]int{"cum_scores": s.Batch * (s.T + 1) * s.C, "transition": s.C * s.C, "duration_bias": s.K * s.C} {
		t, ok := in[name]
		if !ok {
			return nil, fmt.Errorf("inputs have no tensor %q", name)
		}
		v, err := t.Float64s()
		if err != nil || len(v) != n {
			return nil, fmt.Errorf("tensor %q: %d values, want %d: %v", name, len(v), n, err)
		}
		f := make([]F, n)
		for i, x := range v {
			f[i] = F(x)
		}
		vals[name] = f
	}
	lt, ok := in["lengths"]
	if !ok {
		return nil, fmt.Errorf("inputs have no tensor \"lengths\"")
	}
	l32, err := lt.Int32s()
	if err != nil || len(l32) != s.Batch {
		return nil, fmt.Errorf("tensor \"lengths\": want %d integers: %v", s.Batch, err)
	}
	lengths := make([]int64, len(l32))
	for i, x := range l32 {
		lengths[i] = int64(x)
	}
	r, err := cpu.Scan(s, vals["cum_scores"], vals["transition"], vals["duration_bias"], lengths, grads)
	if err != nil {
		return nil, err
	}
	out := map[string]tensorfile.Tensor{"out": pack([]int{s.Batch}, r.Out)}
	if grads {
		out["d_cum_scores"] = pack([]int{s.Batch, s.T + 1, s.C}, r.DCum)
		out["d_transition"] = pack([]int{s.C, s.C}, r.DTrans)
		out["d_duration_bias"] = pack([]int{s.K, s.C}, r.DDur)
	}
	return out, nil
}

// exportScanGPU runs the GPU forward on the given inputs (read as float64,
// packed in the dtype by package gpu) and returns out in the dtype.
func exportScanGPU(ctx context.Context, spec gpuscan.Spec, in map[string]tensorfile.Tensor) (map[string]tensorfile.Tensor, error) {
	d, err := gpu.Shared("cuda")
	if err != nil {
		return nil, err
	}
	vals := map[string][]float64{}
	for _, name := range []string{"cum_scores", "transition", "duration_bias"} {
		t, ok := in[name]
		if !ok {
			return nil, fmt.Errorf("inputs have no tensor %q", name)
		}
		if vals[name], err = t.Float64s(); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
	}
	l32, err := in["lengths"].Int32s()
	if err != nil || len(l32) != spec.Batch {
		return nil, fmt.Errorf("tensor \"lengths\": want %d integers: %v", spec.Batch, err)
	}
	lengths := make([]int64, len(l32))
	for i, x := range l32 {
		lengths[i] = int64(x)
	}
	out, err := gpuscan.Export(ctx, d, spec, gpuscan.Inputs{Cum: vals["cum_scores"], Trans: vals["transition"], Dur: vals["duration_bias"], Lengths: lengths})
	if err != nil {
		return nil, err
	}
	if spec.Dtype == "float64" {
		return map[string]tensorfile.Tensor{"out": tensorfile.F64([]int{spec.Batch}, out)}, nil
	}
	o32 := make([]float32, len(out))
	for i, x := range out {
		o32[i] = float32(x)
	}
	return map[string]tensorfile.Tensor{"out": tensorfile.F32([]int{spec.Batch}, o32)}, nil
}
