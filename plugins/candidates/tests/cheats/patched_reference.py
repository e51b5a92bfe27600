"""Cheat: replaces torch.matmul, which the reference Model calls, so that
the Model returns zeros as the candidate does, and both agree. Refused:
patched gate (every function of torch is recorded before any candidate is
imported)."""
import torch

torch.matmul = lambda a, b, **kw: torch.zeros(a.shape[0], b.shape[-1])


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return torch.zeros(a.shape[0], b.shape[1])
