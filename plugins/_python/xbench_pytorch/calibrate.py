"""Device ceilings for `xbench calibrate`, measured through torch: the best
square-matmul rate per dtype and the device-to-device copy bandwidth. The
report puts achieved FLOP/s against these, so they are what this software
stack reaches on the bare operations, not the datasheet's numbers."""

from __future__ import annotations

import time

import torch

from xbench_pytorch import model as m
from xbench_py import dtypes as xd
from xbench_py import types as xt

# Sizes: 8192^3 keeps an H100's tensor cores busy (1.1 TFLOP per product);
# a CPU gets sizes that finish in about a second per dtype on two cores.
GPU_N, CPU_N, CPU_N_NARROW = 8192, 2048, 1024
GPU_COPY_BYTES, CPU_COPY_BYTES = 1 << 30, 1 << 28
REPS, GPU_CALLS, CPU_CALLS = 5, 10, 2
CPU_CALL_S = 0.3


def _timed(fn, calls: int, gpu: bool) -> float:
    """Seconds for `calls` back-to-back calls of fn, after the device is idle."""
    if gpu:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1000.0
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return time.perf_counter() - t0


def _best_rate(work: float, fn, calls: int, gpu: bool) -> float:
    """work per second of the fastest of REPS batches (after one warm-up
    batch): a ceiling is the best the stack reaches, not its average."""
    _timed(fn, 1, gpu)
    return max(work * calls / _timed(fn, calls, gpu) for _ in range(REPS))


def _matmul_rate(n: int, dtype, dev, calls: int, gpu: bool) -> tuple[float, int]:
    """Best matmul FLOP/s at size n. On a CPU a slow dtype (float16 without
    hardware support runs at a few GFLOP/s) halves n until one product takes
    under CPU_CALL_S, so calibration stays within seconds."""
    while True:
        a = torch.randn(n, n, device=dev).to(dtype)
        b = torch.randn(n, n, device=dev).to(dtype)
        out = torch.empty_like(a)
        one = _timed(lambda: torch.matmul(a, b, out=out), 1, gpu)
        if gpu or one < CPU_CALL_S or n <= 256:
            return _best_rate(2.0 * n**3, lambda: torch.matmul(a, b, out=out), calls, gpu), n
        n //= 2



def _copy_rate(nbytes: int, dev, calls: int, gpu: bool) -> float:
    """Bytes per second of copy_ between two nbytes buffers, freed on return.
    A copy reads every byte and writes it: 2 * nbytes of traffic."""
    src = torch.empty(nbytes, dtype=torch.uint8, device=dev).fill_(1)
    dst = torch.empty_like(src)
    return _best_rate(2.0 * nbytes, lambda: dst.copy_(src), calls, gpu)

def measure(kind: str, dtypes: list, set_precision) -> dict:
    """Ceilings of the device of this kind (cpu, cuda, rocm). set_precision
    is backend.set_precision, so tf32 means what it means in a run."""
    gpu = kind != "cpu"
    dev = torch.device("cuda" if gpu else "cpu")
    tflops, sizes = {}, []
    for name in dtypes:
        d = xd.of(name)
        if d.tf32 and not gpu:
            continue  # cpu float32 matmuls are IEEE: tf32 would repeat float32
        if d.result != d.storage:
            raise xt.Unsupported(f"calibrate: dtype {name} has no torch.matmul ({d.storage} products go through "
                                 f"torch._scaled_mm into {d.result}); it is not calibrated")
        set_precision(name)
        n0 = GPU_N if gpu else (CPU_N if d.ieee else CPU_N_NARROW)
        rate, n = _matmul_rate(n0, m.torch_dtype(name), dev, GPU_CALLS if gpu else CPU_CALLS, gpu)
        sizes.append(f"{name} n={n}")
        tflops[name] = rate / 1e12
    set_precision("float32")
    nbytes = GPU_COPY_BYTES if gpu else CPU_COPY_BYTES
    gbps = _copy_rate(nbytes, dev, GPU_CALLS if gpu else CPU_CALLS, gpu) / 1e9
    timer = "CUDA events" if gpu else "time.perf_counter"
    method = (f"torch {torch.__version__}: torch.matmul ({', '.join(sizes)}), best of {REPS} batches; copy_ of "
              f"{nbytes >> 20} MiB counted read+write; {timer}")
    return {"matmul_tflops": tflops, "copy_gbps": gbps, "method": method}
