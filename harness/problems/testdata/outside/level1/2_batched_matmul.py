"""Honest, for the outside clock test: the batched product through
torch.matmul, which the cheat run before it (1_square_matmul.py) replaces
in its own process."""
import torch


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)
