package tensorfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

// maxHeaderBytes bounds the JSON header so a corrupt length cannot make Read
// allocate gigabytes; the upstream format uses the same 100 MB limit.
const maxHeaderBytes = 100 << 20

// headerEntry is one tensor's line in the JSON header.
type headerEntry struct {
	DType       DType  `json:"dtype"`
	Shape       []int  `json:"shape"`
	DataOffsets [2]int `json:"data_offsets"`
}

// Write stores m at path atomically: it writes a temporary file in the same
// folder, syncs it and renames it over path, so a reader never sees half a
// file. Tensors are laid out in sorted key order.
func Write(path string, m map[string]Tensor) error {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)

	header := make(map[string]headerEntry, len(m))
	offset := 0
	for _, name := range names {
		t := m[name]
		if name == "" || name == "__metadata__" {
			return fmt.Errorf("write %q: invalid tensor name %q", path, name)
		}
		if err := t.checkLen(); err != nil {
			return fmt.Errorf("write %q: tensor %q: %w", path, name, err)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{} // a scalar is [] in JSON, not null
		}
		header[name] = headerEntry{DType: t.DType, Shape: shape, DataOffsets: [2]int{offset, offset + len(t.Data)}}
		offset += len(t.Data)
	}
	hdr, err := json.Marshal(header)
	if err != nil {
		return fmt.Errorf("write %q: encode header: %w", path, err)
	}
	// Pad with spaces so the data starts 8-byte aligned, as other writers do.
	if pad := (8 - len(hdr)%8) % 8; pad > 0 {
		hdr = append(hdr, bytes.Repeat([]byte(" "), pad)...)
	}

	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %q: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // a no-op after a successful rename

	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(hdr)))
	w := func(b []byte) {
		if err == nil {
			_, err = tmp.Write(b)
		}
	}
	w(lenBuf[:])
	w(hdr)
	for _, name := range names {
		w(m[name].Data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %q: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %q: %w", path, err)
	}
	return nil
}

// Read loads every tensor of a safetensors file. It checks the header length,
// that every byte range lies inside the data section, matches its dtype and
// shape, and that ranges neither overlap nor leave holes. Tensor data aliases
// one buffer holding the file.
func Read(path string) (map[string]Tensor, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tensors: %w", err)
	}
	m, err := parse(raw)
	if err != nil {
		return nil, fmt.Errorf("read tensors %q: %w", path, err)
	}
	return m, nil
}

// parse decodes a whole safetensors file held in memory.
func parse(raw []byte) (map[string]Tensor, error) {
	if len(raw) < 8 {
		return nil, fmt.Errorf("file is %d bytes, shorter than the 8-byte header length", len(raw))
	}
	n := binary.LittleEndian.Uint64(raw[:8])
	if n > maxHeaderBytes || n > uint64(len(raw)-8) {
		return nil, fmt.Errorf("header length %d does not fit a %d-byte file", n, len(raw))
	}
	hdr, data := raw[8:8+n], raw[8+n:]

	var entries map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &entries); err != nil {
		return nil, fmt.Errorf("decode header: %w", err)
	}
	type span struct {
		name       string
		begin, end int
	}
	spans := make([]span, 0, len(entries))
	out := make(map[string]Tensor, len(entries))
	for name, msg := range entries {
		if name == "__metadata__" {
			continue // free-form strings; xbench does not use them
		}
		var e headerEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("tensor %q: decode header entry: %w", name, err)
		}
		size := e.DType.Size()
		if size == 0 {
			return nil, fmt.Errorf("tensor %q: unsupported dtype %q", name, e.DType)
		}
		count := 1
		for _, d := range e.Shape {
			if d < 0 {
				return nil, fmt.Errorf("tensor %q: negative dimension in shape %v", name, e.Shape)
			}
			count *= d
		}
		b, end := e.DataOffsets[0], e.DataOffsets[1]
		if b < 0 || end < b || end > len(data) {
			return nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] outside the %d-byte data section", name, b, end, len(data))
		}
		if end-b != count*size {
			return nil, fmt.Errorf("tensor %q: %d bytes for %s shape %v, want %d", name, end-b, e.DType, e.Shape, count*size)
		}
		spans = append(spans, span{name, b, end})
		out[name] = Tensor{DType: e.DType, Shape: e.Shape, Data: data[b:end:end]}
	}
	// An empty tensor starts where the next one does; ordering by end as well
	// keeps it first, whatever order the header map was read in.
	slices.SortFunc(spans, func(a, b span) int {
		if a.begin != b.begin {
			return a.begin - b.begin
		}
		return a.end - b.end
	})
	pos := 0
	for _, s := range spans {
		if s.begin != pos {
			return nil, fmt.Errorf("tensor %q: starts at byte %d, want %d (overlap or hole in the data section)", s.name, s.begin, pos)
		}
		pos = s.end
	}
	if pos != len(data) {
		return nil, fmt.Errorf("data section is %d bytes, tensors cover %d", len(data), pos)
	}
	return out, nil
}
