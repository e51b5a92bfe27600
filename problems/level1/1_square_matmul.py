"""C = A @ B for two square float32 matrices."""
import torch
import torch.nn as nn

N = 256


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
