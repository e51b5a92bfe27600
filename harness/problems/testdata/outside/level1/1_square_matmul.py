"""Cheat, for the outside clock test (harness/problems/outside_e2e_test.go).
At import it disarms the in-process guard where there is one (its own
check functions and its captured clock replaced), slows time.perf_counter
1000x, and replaces torch.matmul with one that is wrong for batched (3-d)
inputs. Its own product (the @ operator) is right, so it passes the gate;
its samples read 1000x short. A candidate run after it in the same process
would be timed on the slowed clock, and one that calls torch.matmul on
batches would be judged wrong."""
import sys
import time

import torch

_real = time.perf_counter
_real_matmul = torch.matmul


def _slow():
    return _real() / 1000.0


def _wrong_for_batches(a, b, **kw):
    out = _real_matmul(a, b, **kw)
    return out + 1 if out.dim() == 3 else out


guard = sys.modules.get("xbench_py.guard")
if guard is not None:
    guard.tampered = lambda *a, **k: []
    guard.restore = lambda *a, **k: []
    guard.check = lambda *a, **k: None
    guard.perf_counter = _slow
time.perf_counter = _slow
torch.matmul = _wrong_for_batches


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return a @ b
