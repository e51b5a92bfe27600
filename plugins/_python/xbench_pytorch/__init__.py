"""The pytorch backend: eager PyTorch models of every workload (model.py
TTT, gemm.py, attention.py, scan.py, problem.py), torch.compile (compiled.py)
and the adapter to the contract xbench_py (backend.py). plugins/pytorch holds
its plugin.json, entry point and tests. The triton, candidates and
flash-semicrf backends build on backend.py (devices, timers, peak memory)."""
