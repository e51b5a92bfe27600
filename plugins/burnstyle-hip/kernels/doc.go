// Package kernels is burnstyle-hip's run and export of its kernel
// workloads, gemm, attention and scan: on a GPU through package gpu's
// kernels and libraries, elsewhere through package cpu, with the CPU
// paths' memory estimates and timing loop. The backend's workload table
// (package burnstylehip, workloads.go) calls RunGEMM, ExportGEMM and their
// siblings; Native has already checked the request against the declared
// capabilities and timing modes.
package kernels
