package tensorfile

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRoundTripEveryDType(t *testing.T) {
	// Values exactly representable in every float type, so the round trip
	// through BF16/F16 must be exact too.
	floats := []float32{0, 1, -2, 0.5, -0.25, 3, 96, -1024}
	tests := []struct {
		name   string
		tensor Tensor
	}{
		{"f32", F32([]int{2, 4}, floats)},
		{"f64", F64([]int{4, 2}, []float64{0, 1, -2, 0.5, 1e-300, -3.25, math.Pi, 1e300})},
		{"i32", I32([]int{3}, []int32{0, -7, math.MaxInt32})},
		{"i64", I64([]int{1, 3}, []int64{5, -9, 31999})},
		{"bf16", BF16([]int{8}, floats)},
		{"f16", F16([]int{2, 2, 2}, floats)},
		{"scalar", F32(nil, []float32{7})},
		// Zero-length tensors share their offset with a neighbour; Read must
		// accept that in whatever order the header map yields them.
		{"empty", F32([]int{0, 3}, nil)},
		{"empty2", BF16([]int{3, 0}, nil)},
	}
	in := map[string]Tensor{}
	for _, tc := range tests {
		in[tc.name] = tc.tensor
	}
	path := filepath.Join(t.TempDir(), "all.safetensors")
	if err := Write(path, in); err != nil {
		t.Fatal(err)
	}
	out, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("read %d tensors, wrote %d", len(out), len(in))
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := out[tc.name]
			// A nil shape (scalar) comes back as an empty one.
			if got.DType != tc.tensor.DType || len(got.Shape) != len(tc.tensor.Shape) || len(got.Shape) > 0 && !slices.Equal(got.Shape, tc.tensor.Shape) {
				t.Fatalf("got %s %v, want %s %v", got.DType, got.Shape, tc.tensor.DType, tc.tensor.Shape)
			}
			if string(got.Data) != string(tc.tensor.Data) {
				t.Fatalf("data differs")
			}
		})
	}
	if f, _ := out["bf16"].Float32s(); !slices.Equal(f, floats) {
		t.Errorf("bf16 decoded %v, want %v", f, floats)
	}
	if f, _ := out["f16"].Float32s(); !slices.Equal(f, floats) {
		t.Errorf("f16 decoded %v, want %v", f, floats)
	}
	if v, _ := out["i64"].Int32s(); !slices.Equal(v, []int32{5, -9, 31999}) {
		t.Errorf("i64 decoded %v", v)
	}
	if v, _ := out["f64"].Float64s(); v[6] != math.Pi {
		t.Errorf("f64 decoded %v", v)
	}
}

func TestHalfRounding(t *testing.T) {
	tests := []struct {
		in       float32
		f16, b16 float32
	}{
		{1 + 1.0/4096, 1, 1},                                          // below half an f16 ulp: rounds down
		{1 + 3.0/2048, 1 + 2.0/1024, 1},                               // f16 tie to even rounds up
		{65520, float32(math.Inf(1)), 65536},                          // overflows f16
		{float32(math.Ldexp(1, -30)), 0, float32(math.Ldexp(1, -30))}, // below the smallest f16 subnormal
		{float32(math.Ldexp(1, -24)), float32(math.Ldexp(1, -24)), float32(math.Ldexp(1, -24))},
		{-0.1, -0.0999755859375, -0.10009765625},
	}
	for _, tc := range tests {
		if got := f16ToFloat32(float32ToF16(tc.in)); got != tc.f16 {
			t.Errorf("f16(%g) = %g, want %g", tc.in, got, tc.f16)
		}
		if got := math.Float32frombits(uint32(float32ToBF16(tc.in)) << 16); got != tc.b16 {
			t.Errorf("bf16(%g) = %g, want %g", tc.in, got, tc.b16)
		}
	}
	nan := float32(math.NaN())
	if got := f16ToFloat32(float32ToF16(nan)); got == got {
		t.Errorf("f16(NaN) = %g", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"int as float", func() error { _, err := I32([]int{1}, []int32{1}).Float64s(); return err }, "not a floating-point"},
		{"float as int", func() error { _, err := F32([]int{1}, []float32{1}).Int32s(); return err }, "not an integer"},
		{"short data", func() error {
			_, err := Tensor{DType: DTypeF32, Shape: []int{3}, Data: make([]byte, 8)}.Float32s()
			return err
		}, "have 8 bytes, want 12"},
		{"i64 overflow", func() error { _, err := I64([]int{1}, []int64{1 << 40}).Int32s(); return err }, "overflows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// rawFile builds a safetensors file from a header string and a data length.
func rawFile(header string, dataLen int) []byte {
	b := make([]byte, 8, 8+len(header)+dataLen)
	binary.LittleEndian.PutUint64(b, uint64(len(header)))
	b = append(b, header...)
	return append(b, make([]byte, dataLen)...)
}

func TestReadCorrupt(t *testing.T) {
	good := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	hugeLen := make([]byte, 16)
	binary.LittleEndian.PutUint64(hugeLen, 1<<40)
	tests := []struct {
		name string
		raw  []byte
		want string
	}{
		{"empty file", nil, "shorter than the 8-byte header length"},
		{"header length past end", hugeLen, "does not fit"},
		{"truncated data", rawFile(good, 4), `tensor "a": data_offsets [0, 8] outside the 4-byte data section`},
		{"trailing bytes", rawFile(good, 12), "data section is 12 bytes, tensors cover 8"},
		{"bad json", rawFile(`{"a":`, 0), "decode header"},
		{"unknown dtype", rawFile(`{"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,1]}}`, 1), `unsupported dtype "Q7"`},
		{"size vs shape", rawFile(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8), "want 12"},
		{"overlap", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), "overlap or hole"},
		{"negative dim", rawFile(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, 0), "negative dimension"},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			if err := os.WriteFile(path, tc.raw, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Read(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want one naming %q and containing %q", err, path, tc.want)
			}
		})
	}
	if _, err := Read(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("reading a missing file succeeded")
	}
}

func TestWriteIsAtomicAndSorted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.safetensors")
	m := map[string]Tensor{"z": F32([]int{1}, []float32{1}), "a": F32([]int{1}, []float32{2})}
	if err := Write(path, m); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("folder holds %d entries after Write, want 1 (temp file left behind?)", len(entries))
	}
	raw, _ := os.ReadFile(path)
	n := binary.LittleEndian.Uint64(raw)
	if (8+n)%8 != 0 {
		t.Errorf("data starts at %d, not 8-byte aligned", 8+n)
	}
	if strings.Index(string(raw[8:8+n]), `"a"`) > strings.Index(string(raw[8:8+n]), `"z"`) {
		t.Errorf("keys not sorted in header %s", raw[8:8+n])
	}
	bad := map[string]Tensor{"x": {DType: DTypeF32, Shape: []int{2}, Data: make([]byte, 4)}}
	if err := Write(path, bad); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Fatalf("Write of a malformed tensor: err = %v", err)
	}
	if got, err := Read(path); err != nil || len(got) != 2 {
		t.Fatalf("failed Write damaged the old file: %v %v", got, err)
	}
}
