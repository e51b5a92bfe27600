"""The jax backend: jax.jit models of every workload it runs and the adapter
to the contract xbench_py (backend.py). Nothing here imports jax on import
of the package: backend.py sets XLA_PYTHON_CLIENT_PREALLOCATE first."""
