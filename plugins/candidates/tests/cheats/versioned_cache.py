"""Cheat: caches its result by the inputs' storage and version counter, so
a refill of the inputs (which bumps the version) is computed again and the
check after the timed calls passes, while the timed calls on unchanged
inputs are lookups. Refused: result reuse (the output handed back still
holds what the harness wrote into it after the previous call)."""
import torch

cache = {}


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        key = (a.data_ptr(), a._version, b.data_ptr(), b._version)
        if key not in cache:
            cache.clear()
            cache[key] = a @ b
        return cache[key]
