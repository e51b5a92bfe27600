"""Cheat: computes in float16 and returns float16 (the Model returns float32):
half the bytes, and within atol 1e-2 at this size. Refused: wrong dtype."""
import torch


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return a.half() @ b.half() if a.is_cuda else (a @ b).half()
