package cli

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/xbench/xbench/harness/backend"
	"github.com/xbench/xbench/harness/manifest"
)

// An NVIDIA machine whose interpreter lacks cupti-python and JAX's CUDA
// plugin, and a CPU machine with everything: what doctor prints, pinned by
// golden files (go test -update rewrites them).
func TestDoctorGolden(t *testing.T) {
	nvidia := []byte(`{"machine": "nvidia", "how": "nvidia-smi -L: GPU 0: NVIDIA H100 80GB HBM3", "python": "/x/.venv/bin/python",
	 "python_version": "3.12.3", "frameworks": [
	  {"name": "torch", "backends": ["pytorch", "triton"], "status": "ok", "version": "2.15.0", "expected": ">=2.11"},
	  {"name": "jax-cuda13-plugin", "backends": ["jax"], "status": "missing", "expected": ">=0.10.2",
	   "why": "JAX's CUDA plugin (without it JAX sees no NVIDIA GPU)", "fix": ".venv/bin/python -m pip install 'jax-cuda13-plugin[with-cuda]==0.10.2'"},
	  {"name": "cupti-python", "backends": ["pytorch", "jax"], "status": "missing", "expected": ">=13.0",
	   "why": "the device clock", "fix": ".venv/bin/python -m pip install 'cupti-python==13.2.0'"},
	  {"name": "flash-semicrf", "backends": ["flash-semicrf"], "status": "missing", "fix": "pip install flash-semicrf"}],
	 "clock": {"device_clock": false, "label": "framework clock", "why": "CUPTI unavailable (No module named 'cupti')"},
	 "gpu": {"opened": false, "by": "torch 2.15.0", "why": "The NVIDIA driver on your system is too old (found version 12040)."}}`)
	cpu := []byte(`{"machine": "cpu", "how": "no nvidia-smi listing a GPU, no rocm-smi, no /dev/kfd", "python": "/x/.venv/bin/python",
	 "python_version": "3.11.7", "frameworks": [{"name": "torch", "backends": ["pytorch"], "status": "ok", "version": "2.15.0"}],
	 "clock": {"device_clock": false, "label": "host-clock", "why": "no GPU: the host clock is the clock"}}`)
	caps := func(devs ...string) backend.Info {
		return backend.Info{Capabilities: backend.Capabilities{Workloads: []backend.WorkloadCaps{{Workload: "gemm", Devices: devs}}}}
	}
	for _, tc := range []struct {
		name    string
		env     []byte
		names   []string // listed backends: flash-semicrf's package is missing, but it is not listed
		wantFix int
	}{
		{"doctor_nvidia.golden", nvidia, []string{"pytorch", "jax", "burnstyle-hip"}, 3},
		{"doctor_cpu.golden", cpu, []string{"pytorch", "burnstyle-hip"}, 0},
	} {
		env, err := parseEnvironment(tc.env)
		if err != nil {
			t.Fatal(err)
		}
		rep := doctorReport{Env: env}
		for _, n := range tc.names {
			rt, info := manifest.RuntimePython, caps("cpu", "cuda", "rocm")
			if n == "burnstyle-hip" {
				rt, info = manifest.RuntimePlugin, caps("cpu", "cuda")
			}
			rep.Rows = append(rep.Rows, doctorRow{Name: n, Runtime: rt, Devices: declaredDevices(info), Clock: backendClock(env, rt), Status: "ok"})
		}
		rep.Problems = append(frameworkProblems(env, tc.names), clockProblems(env, rep.Rows)...)
		rep.Problems = append(rep.Problems, gpuProblems(env)...)
		if len(rep.Problems) != tc.wantFix {
			t.Errorf("%s: %d problems, want %d: %+v", tc.name, len(rep.Problems), tc.wantFix, rep.Problems)
		}
		var b bytes.Buffer
		writeDoctor(&b, rep)
		golden(t, tc.name, b.String())
	}
}

// Each machine and runtime gets its clock; a Python backend on a GPU
// without CUPTI is marked FALLBACK, and the missing device clock is a
// problem with a command when cupti-python is installed but does not load.
func TestDoctorClock(t *testing.T) {
	for _, tc := range []struct {
		machine, runtime string
		clock            *envClock
		want             string
	}{
		{"cpu", manifest.RuntimePython, nil, "host-clock"},
		{"nvidia", manifest.RuntimePython, &envClock{DeviceClock: true, Label: "cupti-kernel-span"}, "cupti-kernel-span (device clock)"},
		{"nvidia", manifest.RuntimePython, &envClock{Why: "CUPTI unavailable (x)"}, "FALLBACK: the framework's own clock (CUPTI unavailable (x))"},
		{"amd", manifest.RuntimePython, &envClock{Why: "ROCm: no CUPTI (rocprofiler not wired)"}, "FALLBACK: the framework's own clock (ROCm"},
		{"amd", manifest.RuntimePlugin, nil, "FALLBACK: device events around each launch"},
		{"nvidia", manifest.RuntimePlugin, nil, "cupti-kernel-span where its Go side loads libcupti"},
	} {
		got := backendClock(envReport{Machine: tc.machine, Clock: tc.clock}, tc.runtime)
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s %s: clock %q, want %q...", tc.machine, tc.runtime, got, tc.want)
		}
	}
	env := envReport{Machine: "nvidia", Clock: &envClock{Why: "CUPTI unavailable (libcupti.so.13: cannot open)"},
		Frameworks: []envFramework{{Name: "cupti-python", Status: "ok", Version: "13.2.0"}}}
	rows := []doctorRow{{Name: "pytorch", Runtime: manifest.RuntimePython}, {Name: "burnstyle-hip", Runtime: manifest.RuntimePlugin}}
	p := clockProblems(env, rows)
	if len(p) != 1 || p[0].Thing != "device clock (pytorch)" || !strings.Contains(p[0].Why, "cannot open") || p[0].Fix == "" {
		t.Errorf("clock problems %+v", p)
	}
	env.Frameworks[0].Status = "missing" // its own line names the fix
	if p := clockProblems(env, rows); len(p) != 0 {
		t.Errorf("clock problem beside a missing cupti-python: %+v", p)
	}
}

// A GPU torch opens is no problem; one it cannot open is, with the reason
// and the command for the machine's kind; torch missing is not probed.
func TestDoctorGPU(t *testing.T) {
	for _, tc := range []struct {
		machine string
		gpu     *envGPU
		want    string
	}{
		{"nvidia", &envGPU{Opened: true, By: "torch 2.15.0", Devices: []string{"NVIDIA H100"}}, ""},
		{"nvidia", &envGPU{By: "torch 2.15.0", Why: "driver too old"}, "nvidia-smi"},
		{"amd", &envGPU{By: "torch 2.15.0+rocm7.2", Why: "torch sees no GPU (device_count 0)"}, "usermod -aG render,video"},
		{"amd", &envGPU{Why: "torch does not import"}, ""},
		{"cpu", &envGPU{Why: "no GPU"}, ""},
	} {
		p := gpuProblems(envReport{Machine: tc.machine, GPU: tc.gpu})
		switch {
		case tc.want == "" && len(p) != 0:
			t.Errorf("%s %+v: problems %+v, want none", tc.machine, tc.gpu, p)
		case tc.want != "" && (len(p) != 1 || !strings.Contains(p[0].Fix, tc.want) || !strings.Contains(p[0].Why, tc.gpu.Why)):
			t.Errorf("%s %+v: problems %+v, want one naming %q and the reason", tc.machine, tc.gpu, p, tc.want)
		}
	}
}

func TestDoctorExitCodes(t *testing.T) {
	_, _, code, err := runApp(t, "doctor", "--bogus")
	if code != 2 || err == nil {
		t.Errorf("doctor --bogus: exit %d (%v), want 2", code, err)
	}
	_, _, code, err = runApp(t, "doctor", "--backends", "nosuch")
	if code != 2 || err == nil || !strings.Contains(err.Error(), `"nosuch" is not a backend`) {
		t.Errorf("doctor --backends nosuch: exit %d (%v), want 2 naming it", code, err)
	}
	if _, err := parseEnvironment([]byte("Traceback")); err == nil {
		t.Error("parseEnvironment accepted a non-JSON report")
	}
	if got := declaredDevices(backend.Info{Capabilities: backend.Capabilities{Workloads: []backend.WorkloadCaps{
		{Devices: []string{"cuda", "cpu"}}, {Devices: []string{"rocm", "cpu"}}}}}); !slices.Equal(got, []string{"cpu", "cuda", "rocm"}) {
		t.Errorf("declaredDevices %v", got)
	}
}
