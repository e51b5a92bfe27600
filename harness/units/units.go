// Package units formats quantities for people, one way everywhere: the run
// table, the report and the profiler print memory alike.
package units

import "fmt"

// Bytes prints a byte count in binary units ("811.0 MiB"), "-" when unknown.
func Bytes(b int64) string {
	if b <= 0 {
		return "-"
	}
	names := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, i := float64(b), 0
	for v >= 1024 && i < len(names)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f %s", v, names[i])
}
