"""Compile every GPU config of the flash-attention kernels for sm_90 (an H100)
on a machine without a GPU, and print per config the shared memory, the
registers and the stack frame (a non-zero stack means register spills), as
ptxas reports them. This is how xbench_triton/attention_cfg.py's tables were checked.

    TRITON_DEFAULT_FP_FUSION=1 python scripts/dev/triton/attention_compile_check.py [fwd|dkdv|dq ...]

env DS (head dims, default 64,128,256), DTS (bf16,fp32), CAUSAL (1).
Pointers are declared 16-byte aligned, as Triton specialises them at run time
(without it the loads cannot become cp.async and nothing is pipelined).
Not a test: compiling takes seconds a config (a minute for float32 configs
that spill).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time

# A development script of the triton backend (not part of it): plugins/_python
# (the contract xbench_py and the backend packages xbench_triton,
# xbench_pytorch, ...) goes first on the path, as benchmark.py puts it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(ROOT, "plugins")
sys.path.insert(0, os.path.join(PLUGINS, "_python"))

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from xbench_triton import attention as ta
from xbench_triton import attention_bwd as tb
from xbench_triton.attention_cfg import SMEM_LIMIT, table

TARGET = GPUTarget("cuda", 90, 32)
KERNELS = {"fwd": ta._fwd_kernel, "dkdv": tb._dkdv_kernel, "dq": tb._dq_kernel}
DTYPES = {"bf16": (tl.bfloat16, 2), "fp16": (tl.float16, 2), "fp32": (tl.float32, 4)}
CUOBJDUMP = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")


def source(kind: str, dt: str, d: int, causal: bool, bm: int, bn: int) -> ASTSource:
    fn = KERNELS[kind]
    sig = {}
    for n in fn.arg_names:
        if n in ("Q", "K", "V", "O", "DO", "DK", "DV", "DQ"):
            sig[n] = "*" + dt
        elif n in ("LSE", "DELTA"):
            sig[n] = "*fp32"
        elif n in ("qk_scale", "sm_scale"):
            sig[n] = "fp32"
        elif n in ("H", "GROUP", "S", "KV"):
            sig[n] = "i32"
        else:
            sig[n] = "constexpr"
    const = {"CAUSAL": causal, "D": d, "DT": DTYPES[dt][0], "BLOCK_M": bm, "BLOCK_N": bn,
             "CHUNK": 32 if dt == "fp32" and d > 32 else 0}  # as xbench_triton.attention.chunk()
    attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(fn.arg_names) if sig[n].startswith("*")}
    return ASTSource(fn, sig, {(fn.arg_names.index(k),): v for k, v in const.items()}, attrs)


def resources(kernel) -> str:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(kernel.asm["cubin"])
        f.flush()
        out = subprocess.run([CUOBJDUMP, "-res-usage", f.name], capture_output=True, text=True).stdout
    m = re.search(r"REG:(\d+).*?STACK:(\d+)", out)
    return f"regs {m.group(1)} stack {m.group(2)} B" if m else out[-200:]


def main() -> None:
    kinds = sys.argv[1:] or list(KERNELS)
    dims = [int(x) for x in os.environ.get("DS", "64,128,256").split(",")]
    causal = os.environ.get("CAUSAL", "1") == "1"
    for kind in kinds:
        for d in dims:
            for dt in os.environ.get("DTS", "bf16,fp32").split(","):
                for bm, bn, w, st in table(kind, d, DTYPES[dt][1]):
                    t = time.time()
                    head = f"{kind:4} D{d:3} {dt} {bm:3}x{bn:3} w{w} s{st}:"
                    try:
                        k = triton.compile(source(kind, dt, d, causal, bm, bn), target=TARGET,
                                           options={"num_warps": w, "num_stages": st})
                        over = " OVER SMEM_LIMIT" if k.metadata.shared > SMEM_LIMIT else ""
                        print(f"{head} smem {k.metadata.shared / 1024:6.1f} KB {resources(k)}{over} "
                              f"[{time.time() - t:.0f} s]", flush=True)
                    except Exception as e:  # noqa: BLE001 - report and go on to the next config
                        print(f"{head} FAIL {type(e).__name__}: {str(e)[:300]}", flush=True)


if __name__ == "__main__":
    main()
