"""Which cuBLAS kernel each way of calling the library picks (issue 11).

pytorch (torch.matmul) and burnstyle-hip both call cuBLAS for a bfloat16
GEMM, yet on some large shapes they differ by 8-12% in one session and
agree within 1% in another. This runs, in one process on one GPU, for each
shape: torch.matmul, cublasGemmEx and cublasGemmStridedBatchedEx with batch
1 (what burnstyle-hip called), the last two through ctypes on the very
libcublas torch loaded, with a 32 MiB workspace and reduced-precision
reductions disallowed as both backends ask. The profiler names the kernel
each one ran; events time it (warm L2, median of REPEATS), the three
calls interleaved call by call so that the GPU's clock and power state,
which move within seconds under back-to-back large GEMMs, fall on all
three alike; --sequential times each path's REPEATS calls in a row instead
(what two backend processes timed one after the other see). Run with
nvidia-smi sampling the SM clock and power beside it to see that state.

  python3 scripts/cublas_paths.py [--sequential] scripts/testdata/vendor-square.csv:nn scripts/testdata/vendor-llm.csv:nt
"""
import csv
import ctypes
import json
import statistics
import sys

import torch

REPEATS = 20
CUDA_R_16BF, COMPUTE_32F, GEMM_DEFAULT = 14, 68, -1
OP_N, OP_T = 0, 1
DISALLOW_REDUCED = 16  # CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION


def loaded_cublas():
    for line in open("/proc/self/maps"):
        path = line.split()[-1]
        if "libcublas.so" in path and "Lt" not in path:
            return path
    raise SystemExit("no libcublas mapped after a torch matmul")


def bind(path):
    lib = ctypes.CDLL(path)
    h = ctypes.c_void_p()
    assert lib.cublasCreate_v2(ctypes.byref(h)) == 0
    ws = torch.empty(32 << 20, dtype=torch.uint8, device="cuda")
    assert lib.cublasSetWorkspace_v2(h, ctypes.c_void_p(ws.data_ptr()), ctypes.c_size_t(32 << 20)) == 0
    assert lib.cublasSetMathMode(h, DISALLOW_REDUCED) == 0
    stream = torch.cuda.current_stream().cuda_stream
    assert lib.cublasSetStream_v2(h, ctypes.c_void_p(stream)) == 0
    v = ctypes.c_int()
    lib.cublasGetVersion_v2(h, ctypes.byref(v))
    return lib, h, ws, v.value


def calls(lib, h, layout, m, n, k):
    """The three ways of computing C[m,n] = A[m,k] @ B (B [k,n] for nn, [n,k] for nt)."""
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if layout == "nn" else \
        torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    one, zero = ctypes.c_float(1), ctypes.c_float(0)
    # Column-major view: C^T (n x m) = op(B^T) A^T.
    opb, ldb = (OP_N, n) if layout == "nn" else (OP_T, k)
    P = ctypes.c_void_p

    def ex():
        r = lib.cublasGemmEx(h, opb, OP_N, n, m, k, ctypes.byref(one), P(b.data_ptr()), CUDA_R_16BF, ldb,
                             P(a.data_ptr()), CUDA_R_16BF, k, ctypes.byref(zero), P(c.data_ptr()), CUDA_R_16BF, n,
                             COMPUTE_32F, GEMM_DEFAULT)
        assert r == 0, r

    def sb():
        r = lib.cublasGemmStridedBatchedEx(h, opb, OP_N, n, m, k, ctypes.byref(one),
                                           P(b.data_ptr()), CUDA_R_16BF, ldb, ctypes.c_longlong(k * n),
                                           P(a.data_ptr()), CUDA_R_16BF, k, ctypes.c_longlong(m * k),
                                           ctypes.byref(zero), P(c.data_ptr()), CUDA_R_16BF, n,
                                           ctypes.c_longlong(m * n), 1, COMPUTE_32F, GEMM_DEFAULT)
        assert r == 0, r

    bt = b if layout == "nn" else b.t()
    ref = torch.matmul(a, bt)
    return {"torch.matmul": lambda: torch.matmul(a, bt, out=c), "cublasGemmEx": ex,
            "cublasGemmStridedBatchedEx": sb}, c, ref


def kernel_of(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return names[-1] if names else "?"


def one_ms(fn):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e)


def time_ms(fns, sequential):
    """Median ms of each of fns: REPEATS calls each, in a row or interleaved."""
    for fn in fns.values():
        for _ in range(5):
            fn()
    ts = {name: [] for name in fns}
    if sequential:
        for name, fn in fns.items():
            ts[name] = [one_ms(fn) for _ in range(REPEATS)]
    else:
        for _ in range(REPEATS):
            for name, fn in fns.items():
                ts[name].append(one_ms(fn))
    return {name: (statistics.median(t), min(t), max(t)) for name, t in ts.items()}


def main(args):
    sequential = "--sequential" in args
    sets = [a for a in args if not a.startswith("--")]
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.matmul(torch.ones(8, 8, device="cuda"), torch.ones(8, 8, device="cuda"))
    path = loaded_cublas()
    lib, h, _ws, version = bind(path)
    print(json.dumps({"libcublas": path, "cublas_version": version, "torch": torch.__version__,
                      "preferred_blas": str(torch.backends.cuda.preferred_blas_library()),
                      "gpu": torch.cuda.get_device_name(), "sequential": sequential}))
    for spec in sets:
        file, layout = spec.rsplit(":", 1)
        for row in csv.DictReader(open(file)):
            m, n, k = int(row["m"]), int(row["n"]), int(row["k"])
            fns, c, ref = calls(lib, h, layout, m, n, k)
            out = {"layout": layout, "m": m, "n": n, "k": k}
            for name, fn in fns.items():
                c.zero_()
                fn()
                torch.cuda.synchronize()
                err = (c.float() - ref.float()).abs().max().item()
                out[name] = {"kernel": kernel_of(fn)[:120], "max_abs_vs_matmul": err}
            for name, (ms, lo, hi) in time_ms(fns, sequential).items():
                out[name].update({"ms": round(ms, 4), "min_ms": round(lo, 4), "max_ms": round(hi, 4),
                                  "tflops": round(2 * m * n * k / ms / 1e9, 1)})
            base = out["torch.matmul"]["ms"]
            out["ratio_to_matmul"] = {name: round(out[name]["ms"] / base, 4) for name in fns}
            print(json.dumps(out), flush=True)
            del fns, c, ref
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main(sys.argv[1:])
