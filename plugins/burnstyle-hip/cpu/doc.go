// Package cpu is burnstyle-hip's pure-Go path for the kernel workloads
// (gemm, attention, scan), a contestant verified like any other backend;
// package cpu/ttt is its TTT model. Their dense products and parallel
// loops come from harness/numeric, which holds kernels only, no model.
package cpu
