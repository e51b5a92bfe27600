// Package cpu is burnstyle-hip's pure-Go path for the kernel workloads
// (gemm, attention, scan), a contestant verified like any other backend. Its
// dense products and parallel loops are the TTT reference model's
// (harness/workload/ttt/reference), and its TTT path is that model itself
// run at the run's precision: at float32 it is the reference code in
// float32, graded against the same code in float64.
package cpu
