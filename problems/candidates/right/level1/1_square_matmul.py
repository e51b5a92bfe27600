"""Right: the product as four blocked products of half-size tiles, summed in float32."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        h = a.shape[1] // 2
        return a[:, :h] @ b[:h] + a[:, h:] @ b[h:]
