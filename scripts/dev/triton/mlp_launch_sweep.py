"""Time the triton mlp inner loop (one layer, 125m's shapes: B=1, nh=12,
f=64, K=16, L=2048, float32) on a GPU at several launch settings, in one
process: mlp_launch() reads XBENCH_TRITON_WARPS/_HB/_BF/_STAGES/_OUT_WARPS
at every call, so each setting is set in os.environ, compiled on its first
call and timed by CUDA events (median of 10 after a warm-up call).

    python scripts/dev/triton/mlp_launch_sweep.py [dtype]

Prints one line per setting; the fastest is what MLP_LAUNCH should hold.
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys

# A development script of the triton backend (not part of it): plugins/_python
# (the contract xbench_py and the backend packages xbench_triton,
# xbench_pytorch, ...) goes first on the path, as benchmark.py puts it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(ROOT, "plugins")
sys.path.insert(0, os.path.join(PLUGINS, "_python"))


import torch  # noqa: E402

from xbench_pytorch.model import torch_dtype  # noqa: E402
from xbench_triton import model  # noqa: E402
from xbench_py import types as xt  # noqa: E402
from xbench_py import spec as xs  # noqa: E402

GRID = {"XBENCH_TRITON_WARPS": (4, 8), "XBENCH_TRITON_HB": (16, 32, 64), "XBENCH_TRITON_BF": (16, 32, 64)}


def main() -> int:
    name = sys.argv[1] if len(sys.argv) > 1 else "float32"
    if name not in ("float32", "bfloat16"):
        print(f"mlp_launch_sweep: dtype {name!r} is not swept (allowed: float32, bfloat16)", file=sys.stderr)
        return 2
    dtype = torch_dtype(name)
    size = xs.model_size("125m")
    specs = xs.inner_param_specs(size, "mlp", 16)
    p = {k.rsplit(".", 1)[1]: torch.from_numpy(v).cuda() for k, v in xs.perturbed_params(specs).items()}
    g = torch.Generator(device="cuda").manual_seed(0)
    shape = (1, size.heads, 2048, size.head_dim)
    xq, xk, xv = (0.5 * torch.randn(shape, generator=g, device="cuda").to(dtype) for _ in range(3))
    gate = torch.sigmoid(torch.randn(shape[:3], generator=g, device="cuda"))
    ref = None
    for values in itertools.product(*GRID.values()):
        setting = dict(zip(GRID, values))
        os.environ.update({k: str(v) for k, v in setting.items()})
        label = " ".join(f"{k.rsplit('_', 1)[1]}={v}" for k, v in setting.items())
        try:
            out = model.ttt_inner(xq, xk, xv, gate, p, "mlp", 16)  # compiles
            err = 0.0 if ref is None else float((out - ref).norm() / ref.norm())
            ref = out if ref is None else ref
            times = []
            for _ in range(10):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                model.ttt_inner(xq, xk, xv, gate, p, "mlp", 16)
                b.record()
                b.synchronize()
                times.append(a.elapsed_time(b))
            print(f"{label}: median {statistics.median(times):8.3f} ms  (rel. diff to the first setting {err:.1e})", flush=True)
        except Exception as e:  # noqa: BLE001 - a setting that does not compile is a row, not the end
            print(f"{label}: ERROR {xt.failure_message(e)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
