"""2x2 max pooling with stride 2."""
import torch
import torch.nn as nn

BATCH, C, H, W = 8, 16, 64, 64


class Model(nn.Module):
    def __init__(self, kernel):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(BATCH, C, H, W)]


def get_init_inputs():
    return [2]
