"""A batch of independent products: C[i] = A[i] @ B[i]."""
import torch
import torch.nn as nn

BATCH, M, K, N = 8, 64, 96, 48


class Model(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.randn(BATCH, M, K), torch.randn(BATCH, K, N)]


def get_init_inputs():
    return []
