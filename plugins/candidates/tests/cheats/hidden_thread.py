"""Cheat: works in a thread after its call returns and hides the thread
from threading.enumerate, which the harness reads. Refused: patched gate
(threading.enumerate replaced), before any thread is looked for."""
import threading
import time

import torch

_enumerate = threading.enumerate
threading.enumerate = lambda: [t for t in _enumerate() if t.name != "hidden-worker"]


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        out = torch.empty(a.shape[0], b.shape[1])

        def work():
            time.sleep(0.5)
            torch.matmul(a, b, out=out)
        threading.Thread(target=work, name="hidden-worker").start()
        return out
