package cupti

import (
	"encoding/binary"
	"testing"
)

func record(kind uint32, start, end uint64) []byte {
	b := make([]byte, 40)
	binary.LittleEndian.PutUint32(b[0:], kind)
	binary.LittleEndian.PutUint64(b[16:], start)
	binary.LittleEndian.PutUint64(b[24:], end)
	return b
}

// kernelRecord is a CUpti_ActivityKernel prefix with a launch and no name.
func kernelRecord() []byte {
	b := record(kindConcurrentKernel, 10, 20)
	b = append(b, make([]byte, 112-len(b))...)
	binary.LittleEndian.PutUint32(b[48:], 7)
	for i, v := range []uint32{12, 1, 1, 256, 1, 1} {
		binary.LittleEndian.PutUint32(b[52+4*i:], v)
	}
	binary.LittleEndian.PutUint32(b[80:], 200<<10)
	return b
}

func TestParseReadsStartAndEndOfTheKindsASpanIsMadeOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  []byte
		want Record
		ok   bool
	}{
		{"kernel", record(kindConcurrentKernel, 100, 5600), Record{Kind: kindConcurrentKernel, Start: 100, End: 5600}, true},
		{"memcpy", record(kindMemcpy, 7, 9), Record{Kind: kindMemcpy, Start: 7, End: 9}, true},
		{"memset", record(kindMemset, 1, 2), Record{Kind: kindMemset, Start: 1, End: 2}, true},
		{"kernel with its launch", kernelRecord(), Record{Kind: kindConcurrentKernel, Start: 10, End: 20, Stream: 7,
			Grid: [3]int32{12, 1, 1}, Block: [3]int32{256, 1, 1}, DynSmem: 200 << 10}, true},
		{"other kind skipped", record(5, 1, 2), Record{}, false},
		{"truncated", record(kindConcurrentKernel, 1, 2)[:24], Record{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parse(tc.rec, 0)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("parse = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestSpanIsFirstStartToLastEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		recs []Record
		want float64
	}{
		{"none", nil, 0},
		{"one 5.5 us kernel", []Record{{Kind: kindConcurrentKernel, Start: 1000, End: 6500}}, 0.0055},
		{"out of order, with a gap", []Record{{Kind: kindConcurrentKernel, Start: 5000, End: 9000}, {Kind: kindMemset, Start: 1000, End: 2000}}, 0.008},
		{"overlapping", []Record{{Kind: kindConcurrentKernel, Start: 0, End: 10000}, {Kind: kindConcurrentKernel, Start: 2000, End: 3000}}, 0.01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Span(tc.recs); got != tc.want {
				t.Fatalf("Span = %v, want %v", got, tc.want)
			}
		})
	}
}
