"""Cheat: returns an empty output at once and fills it in a thread, after
the call (and its sample) has ended. Refused: background thread."""
import threading
import time

import torch


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        out = torch.empty(a.shape[0], b.shape[1])

        def work():
            time.sleep(0.5)  # still working when the harness looks
            torch.matmul(a, b, out=out)
        threading.Thread(target=work, name="cheat-worker").start()
        return out
