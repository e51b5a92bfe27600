"""The flash-semicrf backend: the real flash-semicrf package from PyPI on the
scan workload, inside the pytorch backend's scan phases
(xbench_pytorch.scan)."""
