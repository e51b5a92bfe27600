"""LayerNorm over the last two dimensions, with learned scale and shift."""
import torch
import torch.nn as nn

BATCH, F, D = 8, 32, 64


class Model(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.ln = nn.LayerNorm(shape)
        with torch.no_grad():  # away from the identity, so a candidate that drops them fails
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(BATCH, F, D)]


def get_init_inputs():
    return [(F, D)]
