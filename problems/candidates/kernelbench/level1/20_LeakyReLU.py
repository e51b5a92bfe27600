"""xbench's own candidate for KernelBench level1 20_LeakyReLU.py: x if x > 0 else slope * x as one
Triton kernel on a GPU, one read and one write of each element; on the CPU
(the smoke run) the same arithmetic in torch. Written for xbench; it shares
nothing with KernelBench but the file name and the forward's signature."""

import torch

try:  # the GPU path; the CPU smoke run needs only torch
    import triton
    import triton.language as tl
except ImportError:
    triton = None

if triton is not None:
    @triton.jit
    def _leaky(x_ptr, y_ptr, n, slope, BLOCK: tl.constexpr):
        # int64 offsets: a KernelBench input has 1.6e9 elements, near 2^31
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        v = tl.load(x_ptr + offs, mask=mask)
        tl.store(y_ptr + offs, tl.where(v > 0, v, v * slope), mask=mask)


def leaky_relu(x: torch.Tensor, slope: float) -> torch.Tensor:
    """x where x > 0, else slope * x (ReLU at slope 0): one Triton launch on a GPU."""
    if x.device.type != "cuda" or triton is None:
        return torch.where(x > 0, x, x * slope)
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    _leaky[(triton.cdiv(n, 4096),)](x, y, n, slope, BLOCK=4096, num_warps=8)
    return y


class ModelNew(torch.nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return leaky_relu(x, self.negative_slope)
