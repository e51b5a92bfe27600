"""Compile every autotune config of the TMA GEMM kernel (xbench_triton/gemm_tma.py)
for sm_90 (an H100) on a machine without a GPU, and check that what comes
out is the kernel the H100 measurements describe: tensor-core wgmma
products fed by TMA bulk-tensor copies, in at most the H100's 227 KB of
shared memory (a config over it is pruned by the autotuner on the GPU, so
it is reported here, not failed). The CPU tests run the kernel only in the
interpreter, which compiles nothing.

    python scripts/dev/triton/gemm_compile_check.py   (TRITON_INTERPRET unset)

Prints one line per config and layout; exits 1 if any fails.
plugins/triton/tests/test_triton_gemm.py runs it.
"""

from __future__ import annotations

import os
import sys

# A development script of the triton backend (not part of it): plugins/_python
# (the contract xbench_py and the backend packages xbench_triton,
# xbench_pytorch, ...) goes first on the path, as benchmark.py puts it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(ROOT, "plugins")
sys.path.insert(0, os.path.join(PLUGINS, "_python"))


import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

from xbench_triton import gemm_tma as tma  # noqa: E402

TARGET = GPUTarget("cuda", 90, 32)
SMEM_LIMIT = 227 * 1024


def source(const: dict) -> ASTSource:
    fn = tma._gemm_tma_kernel
    sig = {n: "constexpr" if n in const else ("*bf16" if n.endswith("_ptr") else "i32") for n in fn.arg_names}
    attrs = {(i,): [["tt.divisibility", 16]] for i, n in enumerate(fn.arg_names) if n.endswith("_ptr")}
    return ASTSource(fn, sig, {(fn.arg_names.index(k),): v for k, v in const.items()}, attrs)


def main() -> int:
    if os.environ.get("TRITON_INTERPRET") == "1":
        print("gemm_compile_check: unset TRITON_INTERPRET (the interpreter does not compile)")
        return 2
    bad = 0
    for cfg in tma.CONFIGS + tma.WS_CONFIGS:
        for a_t, b_t in ((False, False), (False, True)):
            name = f"{dict(cfg.kwargs)} warps {cfg.num_warps} stages {cfg.num_stages} {'nt' if b_t else 'nn'}"
            try:
                k = triton.compile(source(dict(cfg.kwargs, A_T=a_t, B_T=b_t, EMULATE=False)), target=TARGET,
                                   options={"num_warps": cfg.num_warps, "num_stages": cfg.num_stages})
            except Exception as e:  # noqa: BLE001 - report every config
                bad += 1
                print(f"compile {name}: FAIL {type(e).__name__}: {' '.join(str(e).split())[:400]}")
                continue
            ptx = k.asm["ptx"]
            missing = [w for w in ("wgmma.mma_async", "cp.async.bulk.tensor") if w not in ptx]
            if missing:
                bad += 1
                print(f"compile {name}: FAIL the PTX has no {', '.join(missing)}")
                continue
            smem = k.metadata.shared
            over = f" (over {SMEM_LIMIT} B: pruned on the GPU)" if smem > SMEM_LIMIT else ""
            print(f"compile {name}: ok, shared {smem} B{over}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
