"""Linear layer, GELU, then a constant scale (a fused chain)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, IN, OUT = 128, 512, 256


class Model(nn.Module):
    def __init__(self, d_in, d_out, scale):
        super().__init__()
        self.linear = nn.Linear(d_in, d_out)
        self.scale = scale

    def forward(self, x):
        return F.gelu(self.linear(x)) * self.scale


def get_inputs():
    return [torch.randn(BATCH, IN)]


def get_init_inputs():
    return [IN, OUT, 1.5]
