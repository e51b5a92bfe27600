package sweep_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/bench"
	"github.com/xbench/xbench/harness/cli"
	"github.com/xbench/xbench/harness/registry"
	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/runner"
	"github.com/xbench/xbench/harness/sweep"
	"github.com/xbench/xbench/harness/workload/ttt"
)

// TestMain lets this test binary serve as the plugin process of the
// benchmarks' "noop" backend, which answers every run at once: what is
// left of a cell's time is the harness's own.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "__plugin" {
		app := &cli.App{Stdout: os.Stdout, Stderr: os.Stderr, Builtins: noopBuiltins}
		if err := app.Run(context.Background(), os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var noopBuiltins = map[string]registry.Builtin{"noop": func() backend.Backend { return noop{} }}

type noop struct{}

func (noop) Info(context.Context) (backend.Info, error) {
	return backend.Info{Name: "noop", Capabilities: backend.Capabilities{Workloads: []backend.WorkloadCaps{{Workload: "ttt",
		Phases: []string{"forward", "backward", "inner_only"}, Devices: []string{"cpu"},
		Values: map[string][]string{"ttt_type": {"linear", "mlp"}, "dtype": {"float32"}, "backbone": {"transformer"}}}}}}, nil
}

func (noop) Run(_ context.Context, req backend.RunRequest) (result.Result, error) {
	samples := make([]float64, req.Config.Repeats)
	for i := range samples {
		samples[i] = 1 + float64(i)/100
	}
	return result.Result{Backend: "noop", Status: result.StatusOK, Config: req.Config, SamplesMs: samples,
		Device: result.Device{Kind: "cpu", Name: "noop", Count: 1}, Env: result.Env{Framework: "none", Timing: "none"}}, nil
}

func (noop) Export(context.Context, backend.ExportRequest) (backend.ExportResponse, error) {
	return backend.ExportResponse{}, fmt.Errorf("noop cannot export")
}

// instant is an executor without processes, for the harness's bookkeeping alone.
type instant struct{ sess *bench.Session }

func (e instant) Run(_ context.Context, name, _ string, cfg result.Config, _ time.Duration) result.Result {
	r, _ := noop{}.Run(context.Background(), backend.RunRequest{Config: cfg})
	r.Backend = name
	return e.sess.Finalize(r)
}
func (e instant) Finalize(r result.Result) result.Result { return e.sess.Finalize(r) }
func (instant) Restart(string)                           {}
func (instant) Close()                                   {}

func noopSession(b *testing.B) *bench.Session {
	b.Helper()
	root := b.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "plugins", "noop"), 0o755); err != nil {
		b.Fatal(err)
	}
	manifest := `{"name": "noop", "runtime": "builtin"}`
	if err := os.WriteFile(filepath.Join(root, "plugins", "noop", "plugin.json"), []byte(manifest), 0o644); err != nil {
		b.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	reg, err := registry.Open(registry.Options{Root: root, Env: runner.ModeVenv, Self: self}, noopBuiltins)
	if err != nil {
		b.Fatal(err)
	}
	sess := bench.NewSession(reg, "bench", bench.Meta{}, nil)
	b.Cleanup(sess.Close)
	return sess
}

func noopPlan(n int) []sweep.Cell {
	plan := make([]sweep.Cell, n)
	for i := range plan {
		plan[i] = sweep.Cell{Backend: "noop", Device: "cpu", Config: ttt.Config{ModelSize: "tiny",
			TTTType: "linear", Batch: 1, SeqLen: 16 * (i + 1), MiniBatch: 16, Dtype: "float32", Backbone: "transformer", Repeats: 10}.Result()}
	}
	sweep.Order(plan)
	return plan
}

// BenchmarkDispatch is the harness's cost per cell (ns/op = one cell):
// "plugin" through a persistent plugin process over gRPC to a backend that
// does nothing, as a real sweep does; "in-process" without the process, so
// the difference is the RPC; "plugin-batch16" sends 16 cells a call
// (--cells-per-call 16), one RPC for 16 cells. All include the checks,
// statistics and the atomic write of the cell's file, whose two fsyncs cost
// what the disk makes them cost: "tmpfs" (where fsync is free) leaves the
// CPU part.
func BenchmarkDispatch(b *testing.B) {
	plugin := func(s *bench.Session) sweep.Executor { return s }
	for _, tc := range []struct {
		name    string
		exec    func(*bench.Session) sweep.Executor
		tmpfs   bool
		perCall int
	}{
		{"plugin/disk", plugin, false, 1},
		{"plugin-batch16/disk", plugin, false, 16},
		{"in-process/disk", func(s *bench.Session) sweep.Executor { return instant{s} }, false, 1},
		{"plugin/tmpfs", plugin, true, 1},
		{"plugin-batch16/tmpfs", plugin, true, 16},
		{"in-process/tmpfs", func(s *bench.Session) sweep.Executor { return instant{s} }, true, 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			if tc.tmpfs {
				shm, err := os.MkdirTemp("/dev/shm", "xbench-bench-*")
				if err != nil {
					b.Skipf("no tmpfs at /dev/shm: %v", err)
				}
				b.Cleanup(func() { os.RemoveAll(shm) })
				dir = shm
			}
			sess := noopSession(b)
			// Start the plugin before the clock: its start-up is paid once per
			// sweep, not per cell.
			if r := sess.Run(context.Background(), "noop", "cpu", noopPlan(1)[0].Config, 0); r.Status != result.StatusOK {
				b.Fatalf("warm-up: %s %s", r.Status, r.Message)
			}
			plan := noopPlan(b.N)
			folder := sweep.NewFolder(filepath.Join(dir, "sweep"))
			b.ResetTimer()
			sum, err := sweep.Run(context.Background(), folder, plan, []sweep.Worker{{Exec: tc.exec(sess)}}, sweep.Options{CellsPerCall: tc.perCall})
			b.StopTimer()
			if err != nil || sum.Written[result.StatusOK] != b.N {
				b.Fatalf("sweep: %v, written %v, want %d ok", err, sum.Written, b.N)
			}
		})
	}
}

// BenchmarkPyTorch20Cells times one 20-cell sweep of the PyTorch backend at
// the tiny size (ns/op = the whole sweep) two ways: xbench sweep, whose
// backend process lives for every cell, and one xbench run per cell, as a
// shell loop over the CLI does, paying Python and torch start-up each time.
func BenchmarkPyTorch20Cells(b *testing.B) {
	if err := exec.Command(filepath.Join(repoRoot, ".venv", "bin", "python"), "-c", "import torch").Run(); err != nil {
		b.Skipf("no torch in %s/.venv: %v", repoRoot, err)
	}
	bin := xbench(b)
	seqs := []string{"64", "128", "256", "512", "1024"}
	common := []string{"--env", "venv", "--backends", "pytorch", "--device", "cpu", "--model-size", "tiny", "--warmup", "1", "--repeats", "3"}
	run := func(b *testing.B, args ...string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = repoRoot
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("xbench %v: %v\n%s", args, err, out)
		}
	}
	b.Run("persistent", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			dir := filepath.Join(b.TempDir(), strconv.Itoa(i))
			args := append([]string{"sweep", "--seq-len", "64,128,256,512,1024", "--ttt-type", "linear,mlp",
				"--phase", "forward,backward", "--results", dir}, common...)
			run(b, args...)
			// A sweep exits 0 with failed cells; only 20 ok cells make a time.
			snap, err := sweep.Read(sweep.NewFolder(dir))
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range snap.Cells {
				if e.Result.Status != result.StatusOK {
					b.Fatalf("%s: %s %s", e.Key, e.Result.Status, e.Result.Message)
				}
			}
			if len(snap.Cells) != 20 {
				b.Fatalf("%d cells, want 20", len(snap.Cells))
			}
		}
		b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N), "s/sweep")
	})
	b.Run("process-per-cell", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			dir := b.TempDir()
			for _, seq := range seqs {
				for _, ttt := range []string{"linear", "mlp"} {
					for _, phase := range []string{"", "--backward"} {
						args := append([]string{"run", "--seq-len", seq, "--ttt-type", ttt, "--results", dir}, common...)
						if phase != "" {
							args = append(args, phase)
						}
						run(b, args...)
					}
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N), "s/sweep")
	})
}
