"""Cheat: the right product with NaN in one row (a kernel that skips a tail,
say). Refused: non-finite output."""
import torch


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        out = a @ b
        out[-1] = float("nan")
        return out
