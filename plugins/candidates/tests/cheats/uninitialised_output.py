"""Cheat (KernelBench's result_reuse_kernel): returns torch.empty of the
output's shape, hoping the allocator hands it the Model's freed output.
The candidate runs before the Model on each seed (and on CUDA the free
blocks are NaN-filled first). Refused: incorrect or non-finite output."""
import torch


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return torch.empty(a.shape[0], b.shape[1], device=a.device)
