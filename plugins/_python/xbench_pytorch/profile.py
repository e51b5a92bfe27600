"""torch.profiler glue for `xbench profile` (the contract's op is in
plugins/_python/xbench_py/profile.py). Shared by pytorch, pytorch/compile and
triton, which reach it through the pytorch backend's Framework.profile.

On a GPU the kernels are the device's (CUPTI activity: every kernel,
memcpy and memset with its own name) and their time is device time. On the
CPU there are no kernels: the rows are aten ops with their self CPU time,
reported as host time.
"""

from __future__ import annotations

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile as torch_profile


def profile(device_kind: str, body, trace_path: str) -> dict:
    gpu = device_kind != "cpu"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if gpu else [])
    with torch_profile(activities=activities) as prof:
        body()
    prof.export_chrome_trace(trace_path)
    kernels = []
    for e in prof.key_averages():
        if gpu:
            # Only the device's own events: an aten op also carries the
            # device time of the kernels it launched, which would count them twice.
            if e.device_type != DeviceType.CUDA:
                continue
            us = e.self_device_time_total
        else:
            us = e.self_cpu_time_total
        kernels.append({"name": e.key, "self_ms": us / 1000.0, "count": e.count})
    name = ("torch.profiler (CUPTI)" if torch.version.cuda else "torch.profiler (roctracer)") if gpu \
        else "torch.profiler (CPU ops)"
    return {"profiler": f"{name}, torch {torch.__version__}", "time_kind": "device" if gpu else "host",
            "kernels": kernels}
