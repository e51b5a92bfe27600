package gpu

import (
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestTiledArgs: the strides cuTensorMapEncodeTiled gets for a dense
// 16-bit tensor, and each documented limit refused with a message naming it.
func TestTiledArgs(t *testing.T) {
	m := TiledMap{Dims: []uint64{128, 4096, 128}, Box: []uint32{64, 128, 1}, Swizzle: TmapSwizzle128B}
	strides, elem, err := m.tiledArgs()
	if err != nil || !slices.Equal(strides, []uint64{256, 256 * 4096}) || !slices.Equal(elem, []uint32{1, 1, 1}) {
		t.Errorf("%+v: strides %v elem %v err %v", m, strides, elem, err)
	}
	for _, tc := range []struct {
		m    TiledMap
		want string
	}{
		{TiledMap{Dims: []uint64{100, 8}, Box: []uint32{64, 8}}, "inner dimension of 100 elements"},
		{TiledMap{Dims: []uint64{128, 8}, Box: []uint32{12, 8}}, "inner box of 12 elements"},
		{TiledMap{Dims: []uint64{128, 8}, Box: []uint32{128, 8}, Swizzle: TmapSwizzle128B}, "exceeds the 128-byte swizzle span"},
		{TiledMap{Dims: []uint64{128, 8}, Box: []uint32{64, 300}}, "box 300 of dimension 1"},
		{TiledMap{Dims: []uint64{128, 8}, Box: []uint32{64}}, "1 box sizes for rank 2"},
		{TiledMap{Dims: []uint64{128, 0}, Box: []uint32{64, 1}}, "dimension 1 has 0 elements"},
		{TiledMap{}, "rank 0"},
	} {
		if _, _, err := tc.m.tiledArgs(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.m, err, tc.want)
		}
	}
	if unsafe.Sizeof(TensorMap{}) != 128 {
		t.Errorf("TensorMap is %d bytes, CUtensorMap 128", unsafe.Sizeof(TensorMap{}))
	}
	var r Runtime // no driver: a clear error, not a crash
	if _, err := r.EncodeTiled(0, m); err == nil || !strings.Contains(err.Error(), "no cuTensorMapEncodeTiled") {
		t.Errorf("EncodeTiled without the driver: %v", err)
	}
}

// TestArchOpts: a target among the defines replaces the device's; without
// one the device's stays first.
func TestArchOpts(t *testing.T) {
	base := []string{"--gpu-architecture=sm_90", "-std=c++17"}
	if got := archOpts(base, []string{"-DX=1"}); !slices.Equal(got, []string{"--gpu-architecture=sm_90", "-std=c++17", "-DX=1"}) {
		t.Errorf("no override: %v", got)
	}
	if got := archOpts(base, []string{"--gpu-architecture=sm_90a", "-DX=1"}); !slices.Equal(got, []string{"-std=c++17", "--gpu-architecture=sm_90a", "-DX=1"}) {
		t.Errorf("override: %v", got)
	}
}
