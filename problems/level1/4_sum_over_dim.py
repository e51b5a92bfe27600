"""Sum over one dimension, keeping it (a reduction)."""
import torch
import torch.nn as nn

BATCH, D1, D2 = 16, 256, 128


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(BATCH, D1, D2)]


def get_init_inputs():
    return [1]
