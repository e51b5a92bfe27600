package workload

import "testing"

func TestMulInt64(t *testing.T) {
	cases := []struct {
		xs   []int
		want int64
		ok   bool
		text string
	}{
		{nil, 1, true, "1"},
		{[]int{1 << 20, 1 << 20, 1 << 20}, 1 << 60, true, "1152921504606846976"},
		{[]int{1 << 20, 1 << 20, 1 << 20, 8}, 0, false, "more than 2^63"}, // exactly 2^63
		{[]int{1 << 32, 1 << 32}, 0, false, "more than 2^63"},
		{[]int{3, -1}, 0, false, "more than 2^63"},
		{[]int{0, 1 << 40}, 0, true, "0"},
	}
	for _, c := range cases {
		got, ok := MulInt64(c.xs...)
		if ok != c.ok || (ok && got != c.want) || CountText(got, ok) != c.text {
			t.Errorf("MulInt64(%v) = %d, %v (%q); want %d, %v (%q)", c.xs, got, ok, CountText(got, ok), c.want, c.ok, c.text)
		}
	}
}
