"""Cheat: wraps its whole forward in try/except and returns its input when
the kernel fails (here it always does). Refused: incorrect, and the static
review names the try/except."""
import torch


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        try:
            return torch.ops.missing_extension.matmul(a, b)
        except Exception:
            return a
