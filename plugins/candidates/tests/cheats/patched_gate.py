"""Cheat: returns zeros and replaces torch.Tensor.abs so that every
difference the gate takes reads zero. Refused: patched gate."""
import torch

_abs = torch.Tensor.abs
torch.Tensor.abs = lambda self: _abs(self) * 0


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return torch.zeros(a.shape[0], b.shape[1])
