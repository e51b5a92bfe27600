package sweep_test

// The command line of xbench sweep, end to end: flags, sweep files, locks
// and GPU workers (helpers in e2e_test.go).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/result"
	"github.com/xbench/xbench/harness/sweep"
)

func TestSecondSweepOnOneFolderIsRefused(t *testing.T) {
	dir := t.TempDir()
	lock, err := sweep.LockFolder(dir, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	o := runXbench(t, nil, "sweep", "--backends", "burnstyle-hip", "--device", "cpu", "--model-size", "tiny",
		"--seq-len", "64", "--results", dir)
	if o.code != 1 || !strings.Contains(o.stderr, "another sweep is writing this folder") {
		t.Errorf("exit %d, stderr %q; want 1 and the lock's message", o.code, o.stderr)
	}
}

func TestSweepUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad seq-len", []string{"--seq-len", "64,100"}, "--seq-len 100 is not a multiple of --mini-batch 16"},
		{"empty item", []string{"--seq-len", "64,,128"}, "empty item"},
		{"bad dtype", []string{"--dtype", "float32,int8"}, `--dtype "int8" is not allowed`},
		{"bad phase", []string{"--phase", "sideways"}, `--phase "sideways" is not allowed`},
		{"two actions", []string{"--status", "--csv"}, "allowed: one of them"},
		{"slurm and shard", []string{"--slurm", "--shard", "0/2"}, "--slurm and --shard"},
		{"bad shard", []string{"--shard", "4/4"}, "0 <= i < N"},
		{"unknown backend", []string{"--backends", "nosuch"}, "unknown backend"},
		{"missing config", []string{"--config", "/nonexistent/sweep.json"}, "read sweep file"},
		{"bad budget", []string{"--budget", "soon"}, `--budget "soon" is not a time (allowed: minutes as a number`},
		{"zero budget", []string{"--budget", "0"}, `--budget "0" is not positive`},
		{"huge budget", []string{"--budget", "1e300"}, `--budget "1e300" is too large (allowed: minutes as a number`},
		{"budget and slurm", []string{"--budget", "15", "--slurm"}, "--budget and --slurm were combined"},
		{"compile ahead without a cache", []string{"--compile-ahead", "4"}, "--compile-ahead 4 needs --compile-cache DIR"},
		{"compile ahead out of range", []string{"--compile-ahead", "17"}, "--compile-ahead 17 is out of range (allowed: 0 to 16"},
		{"compile ahead with shards", []string{"--compile-ahead", "2", "--compile-cache", "cc", "--shard", "0/2"}, "--compile-ahead was combined with --slurm or --shard"},
		{"no cells per call", []string{"--cells-per-call", "0"}, "--cells-per-call 0 is out of range (allowed: 1 to 1024; 1 sends each cell on its own)"},
		{"too many cells per call", []string{"--cells-per-call", "5000"}, "--cells-per-call 5000 is out of range (allowed: 1 to 1024"},
		{"cells per call not a number", []string{"--cells-per-call", "many"}, `"many" for "--cells-per-call"`},
		{"compile ahead on two gpus", []string{"--compile-ahead", "2", "--compile-cache", "cc", "--gpus", "0,1"}, "--compile-ahead was combined with --gpus 0,1 (allowed: one GPU)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"sweep", "--backends", "burnstyle-hip", "--model-size", "tiny", "--results", t.TempDir()}, tt.args...)
			o := runXbench(t, nil, args...)
			if o.code != 2 || !strings.Contains(o.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", o.code, o.stderr, tt.want)
			}
		})
	}
}

// TestBudgetLeavesCellsAndSaysSo: a budget spent before the first cell
// begins leaves every cell without a file, and the command says how many
// were left by backend and how to run them; exit 0.
func TestBudgetLeavesCellsAndSaysSo(t *testing.T) {
	dir := t.TempDir()
	o := runXbench(t, nil, "sweep", "--backends", "burnstyle-hip", "--device", "cpu", "--model-size", "tiny",
		"--seq-len", "16,32", "--budget", "1ns", "--results", dir)
	if o.code != 0 || !strings.Contains(o.stderr, "the --budget of 1ns ran out with 2 of 2 cells not begun (burnstyle-hip 2)") ||
		!strings.Contains(o.stderr, "rerun the same command to run them") {
		t.Fatalf("exit %d, stderr %q", o.code, o.stderr)
	}
	snap, err := sweep.Read(sweep.NewFolder(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Cells) != 0 {
		t.Errorf("%d cells have a file, want none", len(snap.Cells))
	}
}

func TestSweepFileAndFlagsCombine(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	file := filepath.Join(t.TempDir(), "sweep.json")
	body := `{"backends": "burnstyle-hip", "device": "cpu", "model-size": "tiny", "seq-len": [16, 32], "ttt-type": ["linear", "mlp"], "repeats": 2, "warmup": 0}`
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	// --ttt-type on the command line wins over the file's list.
	o := runXbench(t, nil, "sweep", "--config", file, "--ttt-type", "mlp", "--results", dir)
	if o.code != 0 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	// The sweep ends with its table of winners, one line per configuration.
	if !strings.Contains(o.stdout, "winner") || strings.Count(o.stdout, "  burnstyle-hip  ") != 2 || !strings.Contains(o.stdout, "(no other backend finished)") {
		t.Errorf("no end-of-sweep winner table:\n%s", o.stdout)
	}
	rows := readCSV(t, dir)
	if len(rows) != 2 {
		t.Fatalf("%d cells, want 2 (seq-len 16, 32 from the file; mlp from the flag)", len(rows))
	}
	for file, row := range rows {
		if row["ttt_type"] != "mlp" || row["status"] != "ok" || row["n_samples"] != "2" {
			t.Errorf("%s: ttt_type %s, status %s, n %s", file, row["ttt_type"], row["status"], row["n_samples"])
		}
	}
	status := runXbench(t, nil, "sweep", "--results", dir, "--status")
	if !strings.Contains(status.stdout, "burnstyle-hip") || status.code != 0 {
		t.Errorf("--status: exit %d\n%s", status.code, status.stdout)
	}
	again := runXbench(t, nil, "sweep", "--config", file, "--ttt-type", "mlp", "--results", dir)
	if !strings.Contains(again.stderr, "2 already there, nothing new") {
		t.Errorf("rerun of a finished sweep:\n%s", again.stderr)
	}
}

func TestGPUsPinOneWorkerEach(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	o := runXbench(t, nil, "sweep", "--env", "venv", "--plugin-path", faultDir, "--backends", "faulty", "--device", "cpu",
		"--model-size", "tiny", "--seq-len", "16,144,160,176", "--warmup", "0", "--repeats", "3", "--gpus", "0,1", "--results", dir)
	if o.code != 0 {
		t.Fatalf("exit %d\n%s", o.code, o.stderr)
	}
	rows := readCSV(t, dir)
	seen := map[string]bool{}
	for file, row := range rows {
		pin := strings.TrimPrefix(row["device_name"], "fault injector ")
		switch pin {
		case "CUDA_VISIBLE_DEVICES=0 ROCR_VISIBLE_DEVICES=0 HIP_VISIBLE_DEVICES=0",
			"CUDA_VISIBLE_DEVICES=1 ROCR_VISIBLE_DEVICES=1 HIP_VISIBLE_DEVICES=0":
			seen[pin] = true
		default:
			t.Errorf("%s ran with pinning %q", file, pin)
		}
	}
	// Both workers ask for a cell as they start, long before a backend is
	// up, so each gets one at least.
	if len(rows) != 4 || len(seen) != 2 {
		t.Errorf("%d cells over %d GPUs, want 4 over 2:\n%s", len(rows), len(seen), o.stderr)
	}
}

// TestDevicePinsOneGPU: --device cuda:N and rocm:N start the backend with
// the --gpus environment for GPU N, ask it for the plain kind, and record N
// in env.visible_devices, for run and for sweep (one worker named gpu N;
// cells keyed by the kind, so a resumed sweep does not depend on the pin).
func TestDevicePinsOneGPU(t *testing.T) {
	common := []string{"--env", "venv", "--plugin-path", faultDir, "--backends", "faulty", "--model-size", "tiny",
		"--seq-len", "16", "--warmup", "0", "--repeats", "3"}
	check := func(t *testing.T, r result.Result, kind, pin, gpu string) {
		t.Helper()
		if r.Status != result.StatusOK || r.Device.Kind != kind || r.Device.Name != "fault injector "+pin || r.Env.VisibleDevices != gpu {
			t.Errorf("status %s, device %+v, visible_devices %q; want ok, kind %s, pinning %q, visible_devices %q",
				r.Status, r.Device, r.Env.VisibleDevices, kind, pin, gpu)
		}
	}
	t.Run("run cuda", func(t *testing.T) {
		o := runXbench(t, nil, append([]string{"run", "--device", "cuda:3", "--json", "--results", t.TempDir()}, common...)...)
		if o.code != 0 || !strings.Contains(o.stderr, "on cuda:3 ...") {
			t.Fatalf("exit %d\n%s", o.code, o.stderr)
		}
		var r result.Result
		if err := json.Unmarshal([]byte(strings.TrimSpace(o.stdout)), &r); err != nil {
			t.Fatalf("run --json: %v\n%s", err, o.stdout)
		}
		check(t, r, "cuda", "CUDA_VISIBLE_DEVICES=3 ROCR_VISIBLE_DEVICES=3 HIP_VISIBLE_DEVICES=0", "3")
	})
	t.Run("sweep rocm", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "sweep")
		o := runXbench(t, nil, append([]string{"sweep", "--device", "rocm:2", "--results", dir}, common...)...)
		if o.code != 0 || !strings.Contains(o.stderr, "gpu 2 [1/1] faulty") {
			t.Fatalf("exit %d\n%s", o.code, o.stderr)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*__rocm.json"))
		if len(files) != 1 {
			t.Fatalf("cell files %v, want one keyed by device rocm", files)
		}
		raw, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		var r result.Result
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
		check(t, r, "rocm", "CUDA_VISIBLE_DEVICES=2 ROCR_VISIBLE_DEVICES=2 HIP_VISIBLE_DEVICES=0", "2")
	})
}
