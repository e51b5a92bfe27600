"""Wrong: multiplies by B transposed (the classic layout bug)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return a @ b.t()
