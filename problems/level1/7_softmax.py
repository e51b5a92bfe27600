"""Softmax over the last dimension of a wide input."""
import torch
import torch.nn as nn

BATCH, DIM = 32, 8192


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
