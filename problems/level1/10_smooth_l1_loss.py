"""Mean Smooth L1 (Huber, beta 1) loss between predictions and targets (a loss)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, DIM = 128, 1024


class Model(nn.Module):
    def forward(self, pred, target):
        return F.smooth_l1_loss(pred, target)


def get_inputs():
    return [torch.randn(BATCH, DIM), torch.randn(BATCH, DIM)]


def get_init_inputs():
    return []
