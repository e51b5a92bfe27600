"""Right: the conv's own bias and the extra bias folded into one, then ReLU in place."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out, kernel, bias_shape):
        super().__init__()
        # The same parameters in the same order as Model, so one seed gives both the same values.
        self.conv = nn.Conv2d(c_in, c_out, kernel)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        bias = self.conv.bias + self.bias.view(-1)
        return F.conv2d(x, self.conv.weight, bias).relu_()
