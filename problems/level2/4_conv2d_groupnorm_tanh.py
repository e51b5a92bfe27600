"""Convolution, GroupNorm, then tanh (a fused chain with a norm)."""
import torch
import torch.nn as nn

BATCH, C_IN, C_OUT, H, W, KERNEL, GROUPS = 4, 8, 16, 24, 24, 3, 4


class Model(nn.Module):
    def __init__(self, c_in, c_out, kernel, groups):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel)
        self.norm = nn.GroupNorm(groups, c_out)

    def forward(self, x):
        return torch.tanh(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, KERNEL, GROUPS]
