"""Cheat: replaces torch.cuda.Event.record and elapsed_time and
torch.cuda.synchronize at import (each sample would read 0 ms on a GPU).
Refused: patched clock, naming each."""
import torch

torch.cuda.Event.record = lambda self, stream=None: None
torch.cuda.Event.elapsed_time = lambda self, end: 0.0
torch.cuda.synchronize = lambda device=None: None


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return a @ b
