// Package historytest writes synthetic nightly result folders for the
// tests of harness/history, harness/report's dashboard and the CLI: every
// backend on every GEMM shape, samples with 3% noise per call and 1%
// between nights, one folder per commit.
package historytest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/stats"
	"github.com/xbench/xbench/harness/store"
)

var (
	Backends = []string{"pytorch", "jax", "triton"}
	Shapes   = []string{"256", "1024", "4096"}
)

// Config is the GEMM configuration of one shape (m = n = k).
func Config(m string) result.Config {
	return result.Config{Workload: "gemm", Phase: "forward", Warmup: 1, Repeats: 10,
		Params: map[string]string{"m": m, "n": m, "k": m, "batch": "1", "layout": "nn", "dtype": "bfloat16"}}
}

// Commit is night's synthetic 40-character commit.
func Commit(night int) string { return fmt.Sprintf("c%02d%037d", night, night) }

// Steady leaves every cell at its level.
func Steady(int, string, string) float64 { return 1 }

// Nightly writes n folders root/night-NN; factor(night, backend, shape)
// scales a cell's level; status, when not nil, may replace "ok" (an empty
// status leaves the cell out of that night's folder).
func Nightly(root string, n int, factor func(int, string, string) float64,
	status func(int, string, string) result.Status) ([]string, error) {
	return NightlyOn(root, n, func(int) result.Device { return H100 }, factor, status)
}

// H100 and H200 are the two GPU models the nights run on.
var (
	H100 = result.Device{Kind: "cuda", Name: "H100", Count: 1}
	H200 = result.Device{Kind: "cuda", Name: "H200", Count: 1}
)

// NightlyOn is Nightly with night's results on device(night).
func NightlyOn(root string, n int, device func(int) result.Device, factor func(int, string, string) float64,
	status func(int, string, string) result.Status) ([]string, error) {
	rng := rand.New(rand.NewPCG(7, 11))
	start := time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
	var dirs []string
	for night := range n {
		dir := filepath.Join(root, fmt.Sprintf("night-%02d", night))
		dirs = append(dirs, dir)
		for bi, b := range Backends {
			for si, m := range Shapes {
				st := result.StatusOK
				if status != nil {
					st = status(night, b, m)
				}
				if st == "" {
					continue
				}
				r := result.Result{SchemaVersion: result.SchemaVersion, RunID: fmt.Sprintf("run-%02d", night), Backend: b,
					Status: st, Config: Config(m), Device: device(night),
					SamplesMs: []float64{}, Env: result.Env{Framework: b, Timing: "events", GitCommit: Commit(night)},
					Timestamp: start.Add(time.Duration(night) * 24 * time.Hour).Format(time.RFC3339)}
				if st == result.StatusOK {
					level := float64(1+bi) * math.Pow(4, float64(si)) * (1 + 0.01*rng.NormFloat64()) * factor(night, b, m)
					for range 10 {
						r.SamplesMs = append(r.SamplesMs, level*math.Exp(0.03*rng.NormFloat64()))
					}
					s, err := stats.Summarize(r.SamplesMs)
					if err != nil {
						return nil, err
					}
					r.Stats = &s
				} else {
					r.Message = "planted " + string(st)
				}
				if _, err := store.WriteResult(dir, r); err != nil {
					return nil, err
				}
			}
		}
	}
	return dirs, nil
}
