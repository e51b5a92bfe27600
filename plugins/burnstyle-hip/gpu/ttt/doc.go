// Package ttt runs the TTT model of docs/workloads/ttt.md (both backbones,
// the forward and the training step) on the GPU runtime of package gpu.
// Kernels are compiled at model creation for its exact shape; the TTT inner
// loop of a layer is one launch. See ../../docs/FLOOR.md for what the
// hardware allows. The harness's workload package of the same name is
// imported here as ttt too: its Config and Size are this model's inputs.
package ttt
