package workload

import "fmt"

// A workload keeps what it knows of each value of an enum parameter (a
// --dtype: storage bytes, tolerance, rounding) as one row of a table, so
// the cost model, fixtures and tolerance cannot disagree about it. RowNames
// and LookupRow are the table's two questions, the same for every workload.

// RowNames lists the rows' names in declaration order (the allowed values).
func RowNames[T any](rows []T, name func(T) string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = name(r)
	}
	return out
}

// LookupRow is the row named want, or an error naming what (e.g. "gemm
// dtype"), want and the allowed names.
func LookupRow[T any](what string, rows []T, name func(T) string, want string) (T, error) {
	for _, r := range rows {
		if name(r) == want {
			return r, nil
		}
	}
	var zero T
	return zero, fmt.Errorf("%s %q: unknown (allowed: %v)", what, want, RowNames(rows, name))
}
