"""Convolution, then a learned per-channel bias, then ReLU (a fused chain)."""
import torch
import torch.nn as nn

BATCH, C_IN, C_OUT, H, W, KERNEL = 4, 8, 16, 32, 32, 3


class Model(nn.Module):
    def __init__(self, c_in, c_out, kernel, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.relu(self.conv(x) + self.bias)


def get_inputs():
    return [torch.randn(BATCH, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, KERNEL, (C_OUT, 1, 1)]
