"""The GEMM workload in JAX: C = op(A) @ op(B), batched.

params (strings): m, n, k, batch (decimal), layout (nn|nt|tn|tt), dtype
(float32|tf32|bfloat16|float16|float8_e4m3). Layout letter 1 is A, letter 2
is B; 'n' = stored as is, 't' = stored transposed:
    A stored [batch, m, k] ('n') or [batch, k, m] ('t')
    B stored [batch, k, n] ('n') or [batch, n, k] ('t')
    C [batch, m, n] in the compute dtype (bfloat16 for float8_e4m3).

The product is one lax.dot_general (what jnp.matmul lowers to) whose
dimension numbers name the contracted axis of each STORED array: batch axis 0,
A contracts axis 2 ('n') or 1 ('t'), B axis 1 ('n') or 2 ('t'). JAX arrays
have no strided views; this is its equivalent of a transposed view: there is
no transpose op, and XLA hands the layout to the gemm (cuBLAS on a GPU) as
its transpose flags. jnp.matmul(a.mT, b) would give the same HLO after XLA
folds the transpose into the dot.

Precision, explicit on every dot:
  float32   precision=lax.Precision.HIGHEST (IEEE float32, no TF32)
  tf32      lax.DotAlgorithmPreset.TF32_TF32_F32 (TF32 operands, float32
            accumulation; the explicit form of default_matmul_precision
            "tensorfloat32", whose HIGH precision XLA may run as 3 bf16 passes)
  bfloat16/float16  on a GPU, a plain dot of the narrow operands with a
            narrow result (precision=DEFAULT): XLA:GPU makes it one cuBLASLt
            gemm with a float32 compute type, the call torch.matmul makes,
            so the same vendor kernel runs through both (issue 31: with
            preferred_element_type=float32 and a cast, XLA asked cuBLAS for a
            float32 output and converted it in a kernel of its own, 2.4-128
            us more on the H100). On the CPU, preferred_element_type=float32
            and a cast, so the float32 accumulation is stated, not left to
            XLA:CPU
  float8_e4m3  e4m3fn operands (scale 1), preferred_element_type=bfloat16,
            which XLA's gemm rewriter turns into a cuBLASLt fp8 gemm on sm_89+
            (cuda only)
The function is jitted once in prepare(); the step passes A and B as
arguments (never as constants XLA could fold) and returns the jax array,
which the caller's timer blocks on.
"""

from __future__ import annotations

import re
import time

from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from xbench_jax.model import jax_dtype, timed_step
from xbench_py import dtypes as xd
from xbench_py.workloads import gemm_stored_shapes as stored_shapes, parse_gemm

DTYPES: dict[str, tuple[str, ...]] = {
    "cpu": ("float32", "bfloat16", "float16"),
    "cuda": ("float32", "tf32", "bfloat16", "float16", "float8_e4m3"),
}


def parse(params: dict[str, str]) -> tuple[int, int, int, int, str, str]:
    """(m, n, k, batch, layout, dtype), checked (the contract's one parser)."""
    return parse_gemm(params)


def jax_device(device: str):
    """The jax device for "cpu" / "cuda" (a ROCm GPU is "gpu" to jax too)."""
    kind = "cuda" if device.startswith("cuda") else device
    if kind not in DTYPES:
        raise ValueError(f"jax gemm: unknown device {device!r}")
    try:
        devs = jax.devices("cpu" if kind == "cpu" else "gpu")
    except RuntimeError as e:
        raise ValueError(f"jax gemm: no {kind} device: {e}") from e
    return devs[0]


def _check(device: str, dtype: str) -> None:
    kind = "cuda" if device.startswith("cuda") else device
    if dtype not in DTYPES.get(kind, ()):
        raise ValueError(f"jax gemm: dtype {dtype} is not supported on {kind} (supported: {DTYPES.get(kind, ())})")


def gemm_fn(layout: str, dtype: str, gpu: bool = False) -> Callable:
    """The (unjitted) product of stored a, b for this layout and dtype (gpu:
    the form for a GPU, see the module docstring)."""
    dims = (((2 if layout[0] == "n" else 1,), (1 if layout[1] == "n" else 2,)), ((0,), (0,)))
    d, out = xd.of(dtype), jax_dtype(dtype, result=True)
    if d.ieee:
        return lambda a, b: lax.dot_general(a, b, dims, precision=lax.Precision.HIGHEST,
                                            preferred_element_type=out)
    if d.tf32:
        return lambda a, b: lax.dot_general(a, b, dims, precision=lax.DotAlgorithmPreset.TF32_TF32_F32,
                                            preferred_element_type=out)
    if d.result != d.storage:  # float8_e4m3: C straight in its result dtype (bfloat16)
        return lambda a, b: lax.dot_general(a, b, dims, preferred_element_type=out)
    if gpu:
        return lambda a, b: lax.dot_general(a, b, dims, precision=lax.Precision.DEFAULT, preferred_element_type=out)
    return lambda a, b: lax.dot_general(a, b, dims, precision=lax.Precision.DEFAULT,
                                        preferred_element_type=jnp.float32).astype(out)


def prepare(params: dict[str, str], device: str, seed: int) -> Callable[[], Any]:
    """Seeded normal A and B on the device in the stored layout and dtype;
    returns step(), one product per call, C [batch, m, n] as a jax array
    (not blocked on). The jit compiles here, with one product."""
    m, n, k, batch, layout, dtype = parse(params)
    _check(device, dtype)
    dev = jax_device(device)
    sa, sb = stored_shapes(m, n, k, batch, layout)
    ka, kb = jax.random.split(jax.random.key(seed))
    with jax.default_device(dev):
        a = jax.random.normal(ka, sa, jnp.float32).astype(jax_dtype(dtype))
        b = jax.random.normal(kb, sb, jnp.float32).astype(jax_dtype(dtype))
    a, b = jax.device_put(a, dev), jax.device_put(b, dev)
    fn = jax.jit(gemm_fn(layout, dtype, gpu=dev.platform == "gpu"))
    t0 = time.perf_counter()
    fn(a, b).block_until_ready()  # XLA compiles (and on a GPU autotunes) here
    step = timed_step(fn, (a, b))
    step.compile_ms = (time.perf_counter() - t0) * 1e3  # the result's compile_ms (Prepared.compile_ms)
    step.kernel = chosen_kernel(fn, (a, b))
    return step


def chosen_kernel(fn, args: tuple) -> str:
    """What XLA compiled the product to (describe_hlo of the executable's
    optimized HLO). After the first call, lower().compile() is a cache hit:
    the same executable the step runs, not a second compile. XLA's autotuner
    picks among cuBLAS(Lt) and its Triton GEMM tiles per shape, and on the
    H100 the pick differed between processes for some shapes, with the time
    following it (docs/results/sweeps.md); the result names it."""
    try:
        return describe_hlo(fn.lower(*args).compile().as_text())
    except Exception:  # noqa: BLE001 - a name for the record, never a failure of the cell
        return ""


def describe_hlo(text: str) -> str:
    """The GEMM kernel an optimized HLO module runs: a cuBLAS/cuBLASLt or cuDNN
    custom call (with cuBLAS's selected algorithm when recorded), a Triton GEMM
    fusion (with its tile config), or XLA's own dot; "" if none is found."""
    call = re.search(r'custom_call_target="(__(?:cublas|cudnn)[^"]*)"', text)
    if call:
        algo = re.search(r'"selected_algorithm":"?(-?\d+)', text)
        return call.group(1).strip("_") + (f" (algorithm {algo.group(1)})" if algo else "")
    fusion = re.search(r'"kind":"(__(?:triton|cudnn)[^"]*)"', text)
    if fusion:
        cfg = re.search(r'"triton_gemm_config":\{([^}]*)\}', text)
        tiles = re.findall(r'"(\w+)":"?([\w.]+)"?', cfg.group(1)) if cfg else []
        return fusion.group(1).strip("_") + (" " + ",".join(f"{k}={v}" for k, v in tiles) if tiles else "")
    return "dot" if re.search(r"\bdot\(", text) else ""


def export(params: dict[str, str], device: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One product of the given float32 a, b (stored shapes), cast to the dtype
    on the device; C as float32 numpy [batch, m, n]."""
    m, n, k, batch, layout, dtype = parse(params)
    _check(device, dtype)
    dev = jax_device(device)
    sa, sb = stored_shapes(m, n, k, batch, layout)
    if tuple(a.shape) != sa or tuple(b.shape) != sb:
        raise ValueError(f"gemm export: a {a.shape} / b {b.shape} are not the stored shapes {sa} / {sb}")
    ja = jax.device_put(np.ascontiguousarray(a, np.float32), dev).astype(jax_dtype(dtype))
    jb = jax.device_put(np.ascontiguousarray(b, np.float32), dev).astype(jax_dtype(dtype))
    c = jax.jit(gemm_fn(layout, dtype, gpu=dev.platform == "gpu"))(ja, jb)
    return np.asarray(c.astype(jnp.float32)).reshape(batch, m, n)
