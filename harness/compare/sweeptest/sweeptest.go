// Package sweeptest builds synthetic result folders for tests of the
// packages that read results (compare, report, export) and of their
// commands, so none of them needs a backend to run. Samples follow a
// simple cost model with seeded noise, so every output is reproducible.
package sweeptest

import (
	"github.com/xbench/xbench/harness/workload"
	_ "github.com/xbench/xbench/harness/workload/all"

	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/stats"
	"github.com/xbench/xbench/harness/store"
	"github.com/xbench/xbench/harness/verify"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// Device is where every synthetic result "ran".
var Device = result.Device{Kind: "cuda", Name: "NVIDIA H100 80GB HBM3", Driver: "550.54", Count: 1}

// Timestamp is fixed so outputs that print it are stable.
const Timestamp = "2026-01-02T03:04:05Z"

// Backend is one synthetic backend: the fraction of peak it reaches on
// each inner model, a fixed per-call overhead, and the memory it may use.
type Backend struct {
	Name         string
	Efficiency   map[string]float64 // by ttt type
	OverheadMs   float64
	MemoryLimitB int64 // larger estimated peaks are out of memory
}

// Backends are the two of the standard sweep. Neither wins everywhere, and
// pytorch runs out of memory on the largest backward configurations.
var Backends = []Backend{
	{Name: "burnstyle-hip", Efficiency: map[string]float64{"linear": 0.42, "mlp": 0.22}, OverheadMs: 0.4, MemoryLimitB: 80 << 30},
	{Name: "pytorch", Efficiency: map[string]float64{"linear": 0.30, "mlp": 0.30}, OverheadMs: 1.5, MemoryLimitB: 12 << 30},
}

// Configs is the standard sweep: two sizes, both inner models, forward and
// backward, four sequence lengths.
func Configs() []result.Config {
	var out []result.Config
	for _, size := range []string{"125m", "350m"} {
		for _, typ := range []string{"linear", "mlp"} {
			for _, backward := range []bool{false, true} {
				for _, l := range []int{512, 1024, 2048, 4096} {
					out = append(out, Config(size, typ, backward, l))
				}
			}
		}
	}
	return out
}

// Config is one configuration with the sweep's fixed settings.
func Config(size, tttType string, backward bool, seqLen int) result.Config {
	return ttt.Config{ModelSize: size, TTTType: tttType, Backward: backward, Batch: 4,
		SeqLen: seqLen, MiniBatch: 16, Dtype: "float32", Backbone: "transformer", Warmup: 3, Repeats: 10}.Result()
}

// PeakTFLOPs is the synthetic device's float32 (tf32) matmul ceiling.
const PeakTFLOPs = 60.0

// Sweep is every backend on every configuration, stamped with runID.
func Sweep(runID string) []result.Result {
	var out []result.Result
	for _, b := range Backends {
		for i, c := range Configs() {
			out = append(out, Run(runID, b, c, uint64(i)))
		}
	}
	return out
}

// Run is one backend on one configuration.
func Run(runID string, b Backend, rc result.Config, seed uint64) result.Result {
	c := ttt.From(rc)
	r := result.Result{SchemaVersion: result.SchemaVersion, RunID: runID, Backend: b.Name, Status: result.StatusOK,
		Config: rc, Device: Device, SamplesMs: []float64{}, Timestamp: Timestamp,
		Env: result.Env{Framework: b.Name, Timing: "cuda-events", Host: "testhost", GitCommit: "0123456789ab"}}
	size, _ := ttt.LookupSize(c.ModelSize)
	r.NumParams = ttt.NumParams(size, c.TTTType, c.MiniBatch, c.Backbone)
	cost, _ := ttt.CostOf(c)
	// Peak memory: weights, plus activations kept for backward.
	peak := r.NumParams*4 + int64(c.Tokens())*int64(size.Hidden)*4*8
	if c.Backward {
		peak += int64(c.Tokens()) * int64(size.Hidden) * 4 * int64(size.Layers) * 40
	}
	if peak > b.MemoryLimitB {
		r.Status, r.Message = result.StatusOOM, fmt.Sprintf("CUDA out of memory: tried to allocate %d bytes", peak)
		return r
	}
	rng := rand.New(rand.NewPCG(seed, uint64(len(b.Name))))
	ms := cost.FLOPs/(b.Efficiency[c.TTTType]*PeakTFLOPs*1e12)*1e3 + b.OverheadMs
	for i := 0; i < c.Repeats; i++ {
		r.SamplesMs = append(r.SamplesMs, ms*(1+0.02*math.Abs(rng.NormFloat64())))
	}
	r.CompileMs, r.PeakMemoryBytes = 10*ms, peak
	return Finalize(r)
}

// Finalize recomputes what the harness derives from the samples, the way
// bench.Session.Finalize does.
func Finalize(r result.Result) result.Result {
	r.Stats, r.Throughput, r.ThroughputUnit = nil, 0, ""
	if r.Status != result.StatusOK {
		return r
	}
	st, err := stats.Summarize(r.SamplesMs)
	if err != nil {
		panic(fmt.Sprintf("sweeptest: %v", err))
	}
	tp := workload.ThroughputOf(r.Config, st.MedianMs)
	r.Stats, r.Throughput, r.ThroughputUnit = &st, tp.Value, tp.Unit
	return r
}

// Scaled is a copy of rs with every sample multiplied by f.
func Scaled(rs []result.Result, f float64, runID string) []result.Result {
	out := make([]result.Result, len(rs))
	for i, r := range rs {
		r.RunID = runID
		r.SamplesMs = append([]float64{}, r.SamplesMs...)
		for j := range r.SamplesMs {
			r.SamplesMs[j] *= f
		}
		out[i] = Finalize(r)
	}
	return out
}

// Write stores results under dir/<run_id>/ like xbench run does.
func Write(dir string, rs []result.Result) error {
	for _, r := range rs {
		if _, err := store.WriteResult(dir, r); err != nil {
			return err
		}
	}
	return nil
}

// WriteVerify stores a verify record for cfg the way xbench verify does.
func WriteVerify(dir, runID string, cfg result.Config, rows []verify.Row) error {
	return verify.WriteRecord(dir, verify.Record{RunID: runID, Config: cfg, Rows: rows})
}

// Calibration is the synthetic device's ceilings.
func Calibration(runID string) backend.Calibration {
	return backend.Calibration{Backend: "pytorch", Device: Device, RunID: runID, Timestamp: Timestamp,
		MatmulTFLOPs: map[string]float64{"float32": PeakTFLOPs, "bfloat16": 700}, CopyGBps: 2900,
		Method: "synthetic"}
}

// WriteCalibration stores c as <dir>/<run_id>/_calibration.json.
func WriteCalibration(dir string, c backend.Calibration) error {
	raw, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return store.WriteFileAtomic(filepath.Join(dir, c.RunID, "_calibration.json"), append(raw, '\n'))
}

// WriteStandard writes the standard sweep with its verification records
// (pytorch passes everywhere, burnstyle-hip fails on mlp) and calibration
// under dir/<runID>/, and returns the results.
func WriteStandard(dir, runID string) ([]result.Result, error) {
	rs := Sweep(runID)
	if err := Write(dir, rs); err != nil {
		return nil, err
	}
	for _, typ := range []string{"linear", "mlp"} {
		cfg := ttt.Config{ModelSize: "tiny", TTTType: typ, Backward: true, Batch: 1, SeqLen: 512, MiniBatch: 16,
			Dtype: "float32", Backbone: "transformer", Warmup: 3, Repeats: 10}.Result()
		verdict := verify.Pass
		if typ == "mlp" {
			verdict = verify.Fail
		}
		rows := []verify.Row{{Backend: "burnstyle-hip", Device: "cuda", Dtype: "float32", Verdict: verdict, RelL2: 1e-7},
			{Backend: "pytorch", Device: "cuda", Dtype: "float32", Verdict: verify.Pass, RelL2: 2e-7}}
		if err := WriteVerify(dir, runID, cfg, rows); err != nil {
			return nil, err
		}
	}
	return rs, WriteCalibration(dir, Calibration(runID))
}

// H200 is a second GPU model of the same kind as Device, for tests that a
// folder holding both never mixes them.
var H200 = result.Device{Kind: "cuda", Name: "NVIDIA H200", Driver: "550.54", Count: 1}

// OnDevice is a copy of rs as run on dev, every sample times f, stamped
// with runID and a timestamp a day later (so keying by kind alone would
// take these for newer duplicates of rs).
func OnDevice(rs []result.Result, dev result.Device, f float64, runID string) []result.Result {
	out := Scaled(rs, f, runID)
	for i := range out {
		out[i].Device, out[i].Timestamp = dev, "2026-01-03T03:04:05Z"
	}
	return out
}
