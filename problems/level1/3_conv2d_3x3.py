"""A 3x3 convolution with stride 1 and padding 1 (a learned weight and bias)."""
import torch
import torch.nn as nn

BATCH, C_IN, C_OUT, H, W = 4, 8, 16, 32, 32


class Model(nn.Module):
    def __init__(self, c_in, c_out, kernel):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel, padding=kernel // 2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, 3]
