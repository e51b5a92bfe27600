package gpu

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ebitengine/purego"
)

// The hipBLASLt and rocBLAS bindings are checked against AMD's own files,
// as the cuBLASLt binding is against libcublasLt (TestCUBLASLtSymbols): no
// AMD GPU is needed, and none is here.

// rocmBLASBindings are the bindings' tables: library, header files (under
// the include folder) declaring its functions, the status type they return.
func rocmBLASBindings() []struct {
	lib, status string
	headers     []string
	table       map[string]any
	names       []string
} {
	return []struct {
		lib, status string
		headers     []string
		table       map[string]any
		names       []string
	}{
		{"hipBLASLt", "hipblasStatus_t", []string{"hipblaslt/hipblaslt.h"}, (&HipblasLt{}).funcs().table(), (&HipblasLt{}).funcs().names()},
		{"rocBLAS", "rocblas_status", []string{"rocblas/internal/rocblas-auxiliary.h", "rocblas/internal/rocblas-functions.h"},
			(&Rocblas{}).funcs().table(), (&Rocblas{}).funcs().names()},
	}
}

// rocmBLASConstants are the Go constants the bindings pass, by their names
// in the headers.
var rocmBLASConstants = map[string]int64{
	"HIPBLAS_OP_N": HipblasOpN, "HIPBLAS_OP_T": HipblasOpT,
	"HIP_R_32F": HipR32F, "HIP_R_16F": HipR16F, "HIP_R_16BF": HipR16BF,
	"HIPBLAS_COMPUTE_32F": HipblasCompute32F, "HIPBLAS_COMPUTE_32F_FAST_TF32": HipblasCompute32FFastTF32,
	"HIPBLASLT_MATMUL_DESC_TRANSA": HipblasLtDescTransA, "HIPBLASLT_MATMUL_DESC_TRANSB": HipblasLtDescTransB,
	"HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT": HipblasLtLayoutBatch, "HIPBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET": HipblasLtLayoutStride,
	"HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES": HipblasLtPrefMaxWorkspace,
	"rocblas_operation_none":                    RocblasOpN, "rocblas_operation_transpose": RocblasOpT,
	"rocblas_datatype_f16_r": RocblasF16, "rocblas_datatype_f32_r": RocblasF32, "rocblas_datatype_bf16_r": RocblasBF16,
	"rocblas_gemm_algo_standard": RocblasAlgoStandard, "rocblas_gemm_flags_none": RocblasFlagsNone,
}

// TestROCmBLASHeaders checks the bindings against AMD's public headers
// (XBENCH_ROCM_BLAS_INCLUDE: test.sh unpacks Debian's libhipblaslt-dev,
// librocblas-dev, libhipblas-common-dev and libamdhip64-dev there): every
// bound function is declared, returning the library's status type, with as
// many parameters as the Go function passes, and every constant the
// bindings pass has the header's value.
func TestROCmBLASHeaders(t *testing.T) {
	inc := os.Getenv("XBENCH_ROCM_BLAS_INCLUDE")
	if inc == "" {
		t.Skip("set XBENCH_ROCM_BLAS_INCLUDE to a folder holding hipblaslt/, rocblas/, hipblas-common/ and hip/ headers")
	}
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(inc, rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	for _, b := range rocmBLASBindings() {
		var src strings.Builder
		for _, h := range b.headers {
			src.WriteString(read(h))
		}
		for _, name := range b.names {
			n, err := declaredParams(src.String(), b.status, name)
			if err != nil {
				t.Errorf("%s: %v", b.lib, err)
				continue
			}
			if want := reflect.TypeOf(b.table[name]).Elem().NumIn(); n != want {
				t.Errorf("%s %s: the header declares %d parameters, the binding passes %d", b.lib, name, n, want)
			}
		}
		t.Logf("%s: %d functions declared in %s", b.lib, len(b.names), strings.Join(b.headers, ", "))
	}
	all := read("hipblaslt/hipblaslt.h") + read("hipblas-common/hipblas-common.h") + read("hip/library_types.h") +
		read("rocblas/internal/rocblas-types.h")
	for name, want := range rocmBLASConstants {
		got, err := enumValue(all, name)
		if err != nil {
			t.Error(err)
		} else if got != want {
			t.Errorf("%s: the header says %d, the binding passes %d", name, got, want)
		}
	}
	if pkgs, err := os.ReadFile(filepath.Join(inc, "PACKAGES")); err == nil { // what test.sh unpacked
		t.Logf("headers from %s", strings.Join(strings.Fields(string(pkgs)), ", "))
	}
}

// declaredParams finds "status name(...)" in src and counts its parameters.
func declaredParams(src, status, name string) (int, error) {
	loc := regexp.MustCompile(`\b` + status + `\s+` + regexp.QuoteMeta(name) + `\s*\(`).FindStringIndex(src)
	if loc == nil {
		return 0, fmt.Errorf("no declaration %s %s(...)", status, name)
	}
	depth, n, empty := 1, 1, true
	for _, c := range src[loc[1]:] {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 1 {
				n++
			}
		}
		if depth == 0 {
			break
		}
		if c != ' ' && c != '\n' && c != '\t' && c != ')' {
			empty = false
		}
	}
	if depth != 0 {
		return 0, fmt.Errorf("%s: unterminated declaration", name)
	}
	if empty {
		return 0, nil
	}
	return n, nil
}

// enumValue reads "NAME = value" from an enum in src.
func enumValue(src, name string) (int64, error) {
	m := regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\s*=\s*(0[xX][0-9a-fA-F]+|-?[0-9]+)`).FindStringSubmatch(src)
	if m == nil {
		return 0, fmt.Errorf("%s: no value in the headers", name)
	}
	return strconv.ParseInt(m[1], 0, 64)
}

// TestROCmBLASLibraries resolves every function of the bindings against
// the real libraries (XBENCH_LIBHIPBLASLT, XBENCH_LIBROCBLAS: Debian's
// libhipblaslt1 and librocblas4; scripts/rocm-blas-libs.sh fetches them).
// Those are built for a newer glibc than Debian 12's and need ROCm 6's
// libamdhip64, so dlopen fails on this machine; the names are then looked
// up in the library's dynamic symbol table, the table dlsym searches, and
// the loader's answer is logged. Where dlopen works, the purego binding
// itself is made.
func TestROCmBLASLibraries(t *testing.T) {
	libs := map[string]string{"hipBLASLt": os.Getenv("XBENCH_LIBHIPBLASLT"), "rocBLAS": os.Getenv("XBENCH_LIBROCBLAS")}
	if libs["hipBLASLt"] == "" && libs["rocBLAS"] == "" {
		t.Skip("set XBENCH_LIBHIPBLASLT and/or XBENCH_LIBROCBLAS to the real libraries (scripts/rocm-blas-libs.sh)")
	}
	for _, b := range rocmBLASBindings() {
		path := libs[b.lib]
		if path == "" {
			continue
		}
		exported, err := exportedFuncs(path)
		if err != nil {
			t.Fatalf("%s: %v", b.lib, err)
		}
		for _, name := range b.names {
			if !exported[name] {
				t.Errorf("%s %s: not exported by %s", b.lib, name, path)
			}
		}
		t.Logf("%s: %d of %d functions exported by %s (%d exported functions in all)", b.lib, len(b.names), len(b.names), path, len(exported))
		if h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL); err != nil {
			t.Logf("%s: dlopen on this machine: %v", b.lib, err)
		} else if err := bind(h, path, b.table); err != nil {
			t.Errorf("%s: %v", b.lib, err)
		} else {
			t.Logf("%s: dlopen and dlsym of every function: ok", b.lib)
		}
	}
}

// exportedFuncs are the functions path defines in its dynamic symbol table.
func exportedFuncs(path string) (map[string]bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Section != elf.SHN_UNDEF && elf.ST_BIND(s.Info) != elf.STB_LOCAL {
			out[s.Name] = true
		}
	}
	return out, nil
}
