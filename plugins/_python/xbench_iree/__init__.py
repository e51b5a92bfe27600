"""The iree backend: GEMM and attention as MLIR (mlir.py), compiled per shape
and target (targets.py) into a compile cache (cache.py), run through
iree.runtime (backend.py). Tools that fill the cache ahead of time:
scripts/iree_precompile.py, scripts/iree_probe.py."""
