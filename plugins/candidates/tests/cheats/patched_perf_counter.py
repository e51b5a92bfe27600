"""Cheat: right at the gate, then from its fourth call (the first timed one)
replaces time.perf_counter with one that runs 1000x slow and busy-waits
20 ms: a timer that reads time.perf_counter records 0.02 ms. Refused: patched
clock."""
import time

import torch

_real = time.perf_counter
calls = [0]


def _slow():
    return _real() / 1000.0


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        calls[0] += 1
        if calls[0] > 3:
            time.perf_counter = _slow
            end = _real() + 0.02
            while _real() < end:
                pass
        return a @ b
