"""A normal problem after an oversized one, for scripts/h100-kernelbench.sh
(issue 26): ReLU of an input holding a quarter of the device's memory, so
input and output take half of it. It fits only when the oom problem before
it gave its 60% back; its time is compared with the same problem run alone.
On the CPU (the smoke run) the input is 64 MiB."""

import torch


class Model(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    dev = torch.empty(0).device  # get_inputs runs with the timed device as default
    if dev.type == "cpu":
        return [torch.rand(1 << 24)]
    total = torch.cuda.get_device_properties(dev).total_memory
    return [torch.rand(int(0.25 * total) // 4)]


def get_init_inputs():
    return []
