"""The candidates backend: KernelBench-format ModelNew files gated against
the problem's eager Model (xbench_pytorch.problem) before they are timed."""
