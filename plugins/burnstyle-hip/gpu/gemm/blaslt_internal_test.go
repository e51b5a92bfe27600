package gemm

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/xbench/xbench/plugins/burnstyle-hip/gpu"
)

// fakeLt is a BLASLt library for describeGEMM alone: it hands out handles,
// records the preference attributes set and what was destroyed, and fails
// the call named failAt.
type fakeLt struct {
	next              uintptr
	prefAttrs         []int32
	created, released []uintptr
	failAt            string
}

func (f *fakeLt) lib(reduce *[2]uint32) *ltLib[int] {
	create := func(what string) func(h *uintptr) int32 {
		return func(h *uintptr) int32 {
			if f.failAt == what {
				return 7
			}
			f.next++
			*h = f.next
			f.created = append(f.created, f.next)
			return 0
		}
	}
	release := func(h uintptr) int32 { f.released = append(f.released, h); return 0 }
	set := func(uintptr, int32, unsafe.Pointer, uint64) int32 { return 0 }
	return &ltLib[int]{name: "fakeLt", LtDescriptors: gpu.LtDescriptors{
		DescCreate:    func(d *uintptr, _, _ int32) int32 { return create("desc")(d) },
		DescDestroy:   release,
		DescSet:       set,
		LayoutCreate:  func(l *uintptr, _ int32, _, _ uint64, _ int64) int32 { return create("layout")(l) },
		LayoutDestroy: release,
		LayoutSet:     set,
		PrefCreate:    create("pref"),
		PrefDestroy:   release,
		PrefSet: func(_ uintptr, attr int32, _ unsafe.Pointer, _ uint64) int32 {
			f.prefAttrs = append(f.prefAttrs, attr)
			return 0
		}},
		op:        func(op int32) int32 { return op },
		types:     func(string) (int32, int32, int32) { return 0, 0, 0 },
		workspace: 1 << 20, attrMaxWorkspace: 1, reduce: reduce,
	}
}

func TestDescribeGEMM(t *testing.T) {
	reduce := &[2]uint32{ltPrefReduceMask, ltReduceNoOutType}
	for _, tc := range []struct {
		name, dtype, failAt string
		reduce              *[2]uint32
		wantPrefs           []int32 // preference attributes set, in order
		wantErr             string
	}{
		{"float32 output: no reduction preference", "float32", "", reduce, []int32{1}, ""},
		{"16-bit output: partial sums kept out of it", "bfloat16", "", reduce, []int32{1, ltPrefReduceMask}, ""},
		{"a library without the preference", "bfloat16", "", nil, []int32{1}, ""},
		{"a failed layout frees the descriptor", "float32", "layout", reduce, nil, "fakeLt layout: status 7"},
		{"a failed preference frees the layouts", "float32", "pref", reduce, nil, "fakeLt preference: status 7"},
	} {
		f := &fakeLt{failAt: tc.failAt}
		s := Spec{Batch: 2, M: 3, N: 4, K: 5, Dtype: tc.dtype}
		gt, err := gemmTypeOf(tc.dtype)
		if err != nil {
			t.Fatal(err)
		}
		p, err := describeGEMM(f.lib(tc.reduce), &gemmBufs{spec: s, t: gt, args: cublasArgs(s)})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.wantErr)
			}
		} else if err != nil || !slices.Equal(f.prefAttrs, tc.wantPrefs) {
			t.Errorf("%s: preferences %v (error %v), want %v", tc.name, f.prefAttrs, err, tc.wantPrefs)
		} else {
			p.destroy()
		}
		slices.Sort(f.released)
		if !slices.Equal(f.created, f.released) {
			t.Errorf("%s: created %v, destroyed %v", tc.name, f.created, f.released)
		}
	}
}
