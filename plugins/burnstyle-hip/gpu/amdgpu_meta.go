package gpu

// Reading an AMDGPU code object (what hipRTC returns): the per-kernel
// resource use the compiler wrote into its NT_AMDGPU_METADATA note, a
// MessagePack map (AMDGPU code object v3 and later; LLVM's AMDGPUUsage).
// This is the AMD counterpart of ptxas's "-v" report: registers, spills and
// scratch per kernel, read with no GPU and no ROCm tool.

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// AMDKernel is one kernel's resource use from its code object's metadata.
type AMDKernel struct {
	Name      string
	VGPRs     int // vector registers per work-item (.vgpr_count)
	SGPRs     int // scalar registers per wavefront (.sgpr_count)
	AGPRs     int // accumulation registers (CDNA; .agpr_count)
	VGPRSpill int // vector registers spilled to scratch (.vgpr_spill_count)
	SGPRSpill int // scalar registers spilled (.sgpr_spill_count)
	// Scratch is the private (per work-item) memory a kernel needs: spills
	// and any local array the compiler could not keep in registers.
	Scratch   int // .private_segment_fixed_size, bytes
	LDS       int // .group_segment_fixed_size: static shared memory, bytes
	Wavefront int // .wavefront_size: 32 or 64
}

func (k AMDKernel) String() string {
	return fmt.Sprintf("%s: %d VGPR, %d SGPR, %d AGPR, spills %d VGPR %d SGPR, scratch %d B, static LDS %d B, wave%d",
		k.Name, k.VGPRs, k.SGPRs, k.AGPRs, k.VGPRSpill, k.SGPRSpill, k.Scratch, k.LDS, k.Wavefront)
}

// ntAMDGPUMetadata is the note type of the MessagePack metadata.
const ntAMDGPUMetadata = 32

// amdKernels reads the kernels' metadata of an AMDGPU code object, sorted
// by name.
func amdKernels(image []byte) (target string, out []AMDKernel, err error) {
	f, err := elf.NewFile(bytes.NewReader(image))
	if err != nil {
		return "", nil, fmt.Errorf("code object: %w", err)
	}
	if f.Machine != elf.EM_AMDGPU {
		return "", nil, fmt.Errorf("code object: ELF machine %v, want AMDGPU", f.Machine)
	}
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			return "", nil, fmt.Errorf("code object note %s: %w", s.Name, err)
		}
		desc, ok := findNote(data, "AMDGPU", ntAMDGPUMetadata)
		if !ok {
			continue
		}
		v, _, err := unpackMsg(desc)
		if err != nil {
			return "", nil, fmt.Errorf("code object metadata: %w", err)
		}
		top, _ := v.(map[string]any)
		target, _ = top["amdhsa.target"].(string)
		ks, _ := top["amdhsa.kernels"].([]any)
		for _, k := range ks {
			m, _ := k.(map[string]any)
			num := func(key string) int { n, _ := m[key].(int64); return int(n) }
			name, _ := m[".name"].(string)
			out = append(out, AMDKernel{Name: name, VGPRs: num(".vgpr_count"), SGPRs: num(".sgpr_count"),
				AGPRs: num(".agpr_count"), VGPRSpill: num(".vgpr_spill_count"), SGPRSpill: num(".sgpr_spill_count"),
				Scratch: num(".private_segment_fixed_size"), LDS: num(".group_segment_fixed_size"),
				Wavefront: num(".wavefront_size")})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return target, out, nil
	}
	return "", nil, fmt.Errorf("code object has no AMDGPU metadata note")
}

// findNote returns the descriptor of the first ELF note of owner and type.
func findNote(data []byte, owner string, typ uint32) ([]byte, bool) {
	pad := func(n uint32) int { return int((n + 3) &^ 3) }
	for len(data) >= 12 {
		nsz, dsz, t := binary.LittleEndian.Uint32(data), binary.LittleEndian.Uint32(data[4:]), binary.LittleEndian.Uint32(data[8:])
		body := data[12:]
		if pad(nsz)+pad(dsz) > len(body) {
			return nil, false
		}
		name := string(bytes.TrimRight(body[:nsz], "\x00"))
		if name == owner && t == typ {
			return body[pad(nsz) : pad(nsz)+int(dsz)], true
		}
		data = body[pad(nsz)+pad(dsz):]
	}
	return nil, false
}

// unpackMsg decodes one MessagePack value: maps (string keys) to
// map[string]any, arrays to []any, integers to int64, floats to float64.
// It returns the bytes after the value.
func unpackMsg(b []byte) (any, []byte, error) {
	if len(b) == 0 {
		return nil, nil, fmt.Errorf("msgpack: truncated")
	}
	c, b := b[0], b[1:]
	need := func(n int) error {
		if len(b) < n {
			return fmt.Errorf("msgpack: truncated after 0x%02x", c)
		}
		return nil
	}
	uint := func(n int) (uint64, error) {
		if err := need(n); err != nil {
			return 0, err
		}
		var v uint64
		for i := 0; i < n; i++ {
			v = v<<8 | uint64(b[i])
		}
		b = b[n:]
		return v, nil
	}
	bytesOf := func(n uint64) (any, []byte, error) {
		if err := need(int(n)); err != nil {
			return nil, nil, err
		}
		return string(b[:n]), b[n:], nil
	}
	switch {
	case c <= 0x7f:
		return int64(c), b, nil
	case c >= 0xe0:
		return int64(int8(c)), b, nil
	case c >= 0xa0 && c <= 0xbf:
		return bytesOf(uint64(c & 0x1f))
	case c >= 0x90 && c <= 0x9f:
		return unpackArray(b, int(c&0x0f))
	case c >= 0x80 && c <= 0x8f:
		return unpackMap(b, int(c&0x0f))
	}
	switch c {
	case 0xc0:
		return nil, b, nil
	case 0xc2, 0xc3:
		return c == 0xc3, b, nil
	case 0xcc, 0xcd, 0xce, 0xcf:
		v, err := uint(1 << (c - 0xcc))
		return int64(v), b, err
	case 0xd0, 0xd1, 0xd2, 0xd3:
		n := 1 << (c - 0xd0)
		v, err := uint(n)
		return int64(v<<(64-8*n)) >> (64 - 8*n), b, err // sign-extend
	case 0xca:
		v, err := uint(4)
		return float64(math.Float32frombits(uint32(v))), b, err
	case 0xcb:
		v, err := uint(8)
		return math.Float64frombits(v), b, err
	case 0xd9, 0xda, 0xdb, 0xc4, 0xc5, 0xc6: // str and bin
		w := map[byte]int{0xd9: 1, 0xda: 2, 0xdb: 4, 0xc4: 1, 0xc5: 2, 0xc6: 4}[c]
		n, err := uint(w)
		if err != nil {
			return nil, nil, err
		}
		return bytesOf(n)
	case 0xdc, 0xdd:
		n, err := uint(map[byte]int{0xdc: 2, 0xdd: 4}[c])
		if err != nil {
			return nil, nil, err
		}
		return unpackArray(b, int(n))
	case 0xde, 0xdf:
		n, err := uint(map[byte]int{0xde: 2, 0xdf: 4}[c])
		if err != nil {
			return nil, nil, err
		}
		return unpackMap(b, int(n))
	}
	return nil, nil, fmt.Errorf("msgpack: type byte 0x%02x not supported", c)
}

func unpackArray(b []byte, n int) (any, []byte, error) {
	out := make([]any, 0, min(n, 1024))
	for i := 0; i < n; i++ {
		v, rest, err := unpackMsg(b)
		if err != nil {
			return nil, nil, err
		}
		out, b = append(out, v), rest
	}
	return out, b, nil
}

func unpackMap(b []byte, n int) (any, []byte, error) {
	out := make(map[string]any, min(n, 1024))
	for i := 0; i < n; i++ {
		k, rest, err := unpackMsg(b)
		if err != nil {
			return nil, nil, err
		}
		v, rest, err := unpackMsg(rest)
		if err != nil {
			return nil, nil, err
		}
		ks, ok := k.(string)
		if !ok {
			return nil, nil, fmt.Errorf("msgpack: map key %v is not a string", k)
		}
		out[ks], b = v, rest
	}
	return out, b, nil
}
