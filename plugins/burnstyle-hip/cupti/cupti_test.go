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

func TestParseReadsStartAndEndOfTheKindsASpanIsMadeOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  []byte
		want Record
		ok   bool
	}{
		{"kernel", record(kindConcurrentKernel, 100, 5600), Record{kindConcurrentKernel, 100, 5600}, true},
		{"memcpy", record(kindMemcpy, 7, 9), Record{kindMemcpy, 7, 9}, true},
		{"memset", record(kindMemset, 1, 2), Record{kindMemset, 1, 2}, true},
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
		{"one 5.5 us kernel", []Record{{kindConcurrentKernel, 1000, 6500}}, 0.0055},
		{"out of order, with a gap", []Record{{kindConcurrentKernel, 5000, 9000}, {kindMemset, 1000, 2000}}, 0.008},
		{"overlapping", []Record{{kindConcurrentKernel, 0, 10000}, {kindConcurrentKernel, 2000, 3000}}, 0.01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Span(tc.recs); got != tc.want {
				t.Fatalf("Span = %v, want %v", got, tc.want)
			}
		})
	}
}
