package gpu

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestSymbolTablesAreSymmetric(t *testing.T) {
	var d drvAPI
	for _, tc := range []struct {
		names  drvNames
		prefix string
	}{{cudaDrvNames, "cu"}, {hipDrvNames, "hip"}} {
		tab := d.table(tc.names)
		if len(tab) != len(tc.names) {
			t.Errorf("%s table: %d distinct symbols for %d fields (a name repeats)", tc.prefix, len(tab), len(tc.names))
		}
		for _, n := range tc.names {
			if !strings.HasPrefix(n, tc.prefix) {
				t.Errorf("symbol %q lacks prefix %q", n, tc.prefix)
			}
		}
	}
	var r rtcAPI
	if len(r.table(nvrtcNames)) != len(nvrtcNames) || len(r.table(hiprtcNames)) != len(hiprtcNames) {
		t.Error("rtc tables repeat a name")
	}
	for i := range nvrtcNames {
		nv := strings.TrimPrefix(nvrtcNames[i], "nvrtc")
		hp := strings.TrimPrefix(hiprtcNames[i], "hiprtc")
		if strings.Replace(nv, "CUBIN", "Code", 1) != hp {
			t.Errorf("rtc field %d: %s vs %s do not name the same call", i, nvrtcNames[i], hiprtcNames[i])
		}
	}
	for lib, f := range map[string]funcs{"cublas": (&cublas{}).funcs(), "cublasLt": (&CublasLt{}).funcs(),
		"hipblasLt": (&HipblasLt{}).funcs(), "rocblas": (&Rocblas{}).funcs()} {
		if len(f.table()) != len(f) || len(f.names()) != len(f) {
			t.Errorf("%s: the binding names a function twice", lib)
		}
		for _, x := range f {
			if reflect.TypeOf(x.fn).Kind() != reflect.Pointer || reflect.TypeOf(x.fn).Elem().Kind() != reflect.Func {
				t.Errorf("%s %s: bound to a %T, not a pointer to a func field", lib, x.name, x.fn)
			}
		}
	}
	var c cudaExtra
	var h hipExtra
	if len(c.table()) != 9 || len(h.table()) != 3 {
		t.Error("vendor extra tables changed size; update the struct and the table together")
	}
}

func TestCandidatesOrder(t *testing.T) {
	t.Setenv("XBENCH_TEST_LIB", "/opt/custom/libx.so")
	s := libSpec{"test lib", "XBENCH_TEST_LIB", []string{"libx.so.2", "libx.so"}, []string{"/a", "/b"}}
	got := s.candidates()
	want := []string{"/opt/custom/libx.so", "libx.so.2", "libx.so", "/a/libx.so.2", "/a/libx.so", "/b/libx.so.2", "/b/libx.so"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("candidates = %v, want %v", got, want)
	}
	for _, spec := range []libSpec{specNVRTC, specCUBLAS} {
		if !strings.Contains(strings.Join(spec.dirs, " "), "/usr/local/cuda-*/targets/x86_64-linux/lib") {
			t.Errorf("%s: the versioned toolkit folder (where the H100 machine has it) is not searched", spec.what)
		}
	}
	if !strings.Contains(strings.Join(specCUPTI.dirs, " "), "/usr/local/cuda/extras/CUPTI/lib64") || specCUPTI.env != "XBENCH_LIBCUPTI" {
		t.Error("CUPTI: the toolkit's extras/CUPTI or the XBENCH_LIBCUPTI override is not searched")
	}
	if specNVRTC.names[0] != "libnvrtc.so.13" || specCUDA.names[0] != "libcuda.so.1" || specCUPTI.names[0] != "libcupti.so.13" {
		t.Error("preferred library names changed")
	}
}

func TestMissingLibraryMessage(t *testing.T) {
	s := libSpec{"Frobnicator", "XBENCH_TEST_NOLIB", []string{"libxbench-frob.so.9"}, []string{"/nonexistent/xb"}}
	_, _, err := s.open()
	if err == nil {
		t.Fatal("opened a library that does not exist")
	}
	for _, want := range []string{"Frobnicator", "libxbench-frob.so.9", "/nonexistent/xb", "XBENCH_TEST_NOLIB"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not mention %q", err, want)
		}
	}
}

// On a machine without a GPU, asking for one must fail with a message that
// names what was looked for; with one, the device must describe itself.
func TestOpenWithoutGPU(t *testing.T) {
	if os.Getenv("XBENCH_LIBCUDA") != "" {
		t.Skip("XBENCH_LIBCUDA is set; the emulator tests cover this path")
	}
	d, err := Open("cuda")
	if err == nil {
		defer d.Close()
		info := d.Info()
		if info.Kind != "cuda" || info.Name == "" || info.Count < 1 {
			t.Errorf("cuda device info %+v", info)
		}
		t.Skipf("a CUDA GPU is present (%s); the no-GPU message is not testable here", info.Name)
	}
	if !strings.Contains(err.Error(), "libcuda.so.1") && !strings.Contains(err.Error(), "NVRTC") {
		t.Errorf("cuda error %q names neither the driver nor the compiler library", err)
	}
	if _, err := Open("rocm"); err == nil {
		t.Skip("a ROCm GPU is present")
	} else if !strings.Contains(err.Error(), "libamdhip64.so") && !strings.Contains(err.Error(), "hipRTC") {
		t.Errorf("rocm error %q names no HIP library", err)
	}
	if _, err := Open("auto"); err == nil {
		t.Skip("auto found a GPU")
	} else if !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Errorf("auto error %q lost the CUDA reason", err)
	}
	if _, err := Open("tpu"); err == nil || !strings.Contains(err.Error(), "cuda, rocm or auto") {
		t.Errorf("unknown kind: %v", err)
	}
}
