"""The triton backend: own Triton kernels (TTT's inner loop forward and
backward, GEMM, flash attention, the semi-CRF scan) behind the pytorch
backend's adapter (xbench_pytorch.backend: devices, timers, dense layers).
Nothing here imports triton on import of the package: TRITON_INTERPRET must
be settled first (plugins/triton/benchmark.py)."""
