"""Cheat: right for its first three calls (the gate's seeds), zeros after.
Refused: wrong after timing."""
import torch

calls = [0]


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        calls[0] += 1
        return a @ b if calls[0] <= 3 else torch.zeros(a.shape[0], b.shape[1])
