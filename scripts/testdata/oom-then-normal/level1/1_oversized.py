"""A problem that cannot fit, for scripts/h100-kernelbench.sh (issue 26):
its input takes 60% of the device's memory and its forward asks for twice
that, so it ends oom while holding the input. On the CPU (the script's
smoke run) the input is small and the forward asks the allocator for a
petabyte. The problem after it (2_big_relu.py) needs half the device: it
runs only if this one's memory was given back."""

import torch


def _device() -> torch.device:
    return torch.empty(0).device  # get_inputs runs with the timed device as default


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.device.type == "cpu":
            return x + torch.empty(1 << 50, dtype=torch.uint8).sum()
        return torch.cat([x, x])  # 120% of the device


def get_inputs():
    dev = _device()
    if dev.type == "cpu":
        return [torch.rand(64, 64)]
    total = torch.cuda.get_device_properties(dev).total_memory
    return [torch.rand(int(0.6 * total) // 4)]


def get_init_inputs():
    return []
