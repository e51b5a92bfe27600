"""The iree backend's adapter to xbench_py: GEMM and attention forward
written as MLIR (mlir.py), compiled once per shape for the device's
target (targets.py) through the compile cache (cache.py), and run
through iree.runtime: llvm-cpu on the local-task driver (cpu), the cuda
driver (cuda) and the hip driver (rocm).

compile_ms includes getting the module: either iree-compile run in this
process, or a read of a module compiled beforehand from --compile-cache (the
GPU machine has no IREE compiler), and loading it: inside the first call on
the CPU, in prepare on a GPU (_load_early says why), added to the first
call's time there. Each result's warnings say which happened and how long
that part took.

Timing: the host clock around one call of the module's function. The Python
call is synchronous: IREE's synchronous entry point submits the work and
waits on its fence before returning (checked on the H100: a 1.1 ms bf16
4096^3 product's first call returned after 1 ms). So a sample is device work
plus IREE's launch path and the output allocation (see HostTimer); on cuda
the contract wraps it in the device clock (xbench_py.devclock: the span of the
call's CUPTI kernel records), which leaves those out.

--cold-cache on a GPU: before each sample, outside it, the device fills a
buffer of xbench_py.modes.GPU_FLUSH_BYTES with a new value through a HAL
command buffer (DeviceFlush), as the other backends write theirs, and waits
for it.

Backward attention is answered unsupported: IREE compiles what it is given
and has no autodiff of its own (a backward would be MLIR written or exported
by another framework, e.g. iree-turbine from PyTorch).
"""

from __future__ import annotations

import gc
import time

import numpy as np

import iree.runtime as rt

from xbench_iree import cache as iree_cache
from xbench_iree import mlir as iree_mlir
from xbench_iree import targets as iree_targets
from xbench_py import dtypes as xd
from xbench_py import modes
from xbench_py import types as xt

DEVICES = ("cpu", "cuda", "rocm")
DTYPES = iree_mlir.DTYPES  # tf32 and float8 have no IREE form here: refused by the capabilities
DRIVER = {"cpu": "local-task", "cuda": "cuda", "rocm": "hip"}
CAPS = xt.Capabilities(
    xt.WorkloadCaps("gemm", phases=("forward",), devices=DEVICES,
                    values={"dtype": DTYPES, "layout": xt.GEMM_LAYOUTS}),
    # forward only: IREE has no autodiff of its own (module docstring); the
    # capability answers the other phases before any prepare
    xt.attention_caps(DEVICES, dtypes=DTYPES, phases=("forward",)),
)


def np_dtype(dtype: str):
    """The NumPy type of the host arrays of dtype's storage element in
    xbench_py.dtypes (ml_dtypes' for the elements NumPy lacks: bfloat16)."""
    import ml_dtypes

    return xd.resolve(dtype, lambda e: getattr(np, e, None) or getattr(ml_dtypes, e, None), "numpy/ml_dtypes")


def random_input(rng, shape, dtype):
    """Seeded normal values in the dtype for a timed call: a block of at most
    2^22 draws, repeated to fill the shape. Drawing every value on the host
    takes seconds for the largest suite operands (16384^2, 8192x28672),
    repeated over hundreds of cells; the values only need to be finite and
    varied (exports use the harness's inputs, not these)."""
    n = int(np.prod(shape))
    block = rng.standard_normal(min(n, 1 << 22), dtype=np.float32).astype(np_dtype(dtype))
    return np.resize(block, shape)


def _load_early(device: xt.Device, load) -> float:
    """On a GPU, get and load the module now, in prepare, and return the host
    ms it took (the result's compile_ms includes it): loading runs the
    module's initializers on the device, and under the device clock's CUPTI
    tracing, which starts with the first call, the H100 sweep's s512
    attention modules (whose causal mask IREE hoists into an initializer)
    never returned while the same modules loaded untraced ran in 0.5-4 ms
    (scripts/iree_attention_probe.py). On the CPU the first call loads it."""
    if device.kind == "cpu":
        return 0.0
    t0 = time.perf_counter()
    load()
    return (time.perf_counter() - t0) * 1e3


class HostTimer(xt.Timer):
    description = ("host clock (time.perf_counter) around one synchronous iree.runtime call: submit, device work, "
                   "wait on the call's fence; includes IREE's launch path and the output allocation")


class DeviceFlush:
    """--cold-cache on a GPU: a fill of a device buffer larger than any L2
    (xbench_py.modes.GPU_FLUSH_BYTES), each time with a new 32-bit value so no
    layer can skip the write, submitted through a HAL command buffer and
    waited for on a timeline semaphore. The buffer is allocated on the first
    flush, so a warm run never holds it."""

    def __init__(self, device):
        self.device = device
        self.buffer = None
        self.semaphore = None
        self.n = 0

    def __call__(self) -> None:
        if self.buffer is None:
            self.buffer = self.device.allocator.allocate_buffer(
                memory_type=rt.MemoryType.DEVICE_LOCAL, allowed_usage=rt.BufferUsage.DEFAULT,
                allocation_size=modes.GPU_FLUSH_BYTES)
            self.semaphore = self.device.create_semaphore(0)
        self.n += 1
        cb = rt.HalCommandBuffer(self.device)
        cb.fill(self.buffer, np.uint32(self.n), end=True)
        self.device.queue_execute(cb, [(self.semaphore, self.n - 1)], [(self.semaphore, self.n)])
        self.semaphore.wait(self.n)


class GPUTimer(HostTimer):
    """The host timer with a device cache flush (DeviceFlush) for --cold-cache."""

    def __init__(self, device):
        self._flush = DeviceFlush(device)

    def flush(self) -> None:
        self._flush()


class Backend(xt.Framework):
    framework = "iree"
    capabilities = CAPS

    def __init__(self):
        self._configs = {}  # driver -> rt.Config (one device per process, made once)

    def versions(self) -> dict:
        import ml_dtypes
        import iree.runtime.version as rv

        v = {"iree.runtime": rv.VERSION, "iree_revision": rv.REVISIONS.get("IREE", ""), "numpy": np.__version__,
             "ml_dtypes": ml_dtypes.__version__}
        if iree_cache.have_compiler():
            import iree.compiler.version as cv

            v["iree.compiler"] = cv.VERSION
        else:
            v["iree.compiler"] = "absent (modules only from --compile-cache)"
        return v

    def _devices(self, kind: str) -> list:
        try:
            return list(rt.get_driver(DRIVER[kind]).query_available_devices())
        except (RuntimeError, ValueError):  # the driver's library (libcuda, libamdhip64) is not here
            return []

    def resolve_device(self, requested: str) -> xt.Device:
        if requested == "auto":
            requested = next((k for k in ("cuda", "rocm") if self._devices(k)), "cpu")
        if requested == "cpu":
            return xt.Device("cpu", xt.cpu_name(), count=1)
        devs = self._devices(requested)
        if not devs:
            raise xt.Unsupported(f"device {requested} is not available to iree.runtime (its {DRIVER[requested]} "
                                 f"driver finds no device or cannot load its library); available: cpu")
        target = iree_targets.for_device(requested)
        return xt.Device(requested, devs[0].get("name", ""), driver=f"iree {DRIVER[requested]} driver, target "
                         f"{target.name}", count=len(devs))

    def timer(self, device: xt.Device) -> xt.Timer:
        # the contract wraps this in the device clock on cuda (xbench_py.devclock)
        if device.kind == "cpu":
            return HostTimer()  # the contract's host-buffer flush evicts the CPU's caches
        return GPUTimer(self._config(device.kind).device)

    def release(self) -> None:
        gc.collect()

    def _config(self, kind: str):
        driver = DRIVER[kind]
        if driver not in self._configs:
            self._configs[driver] = rt.Config(driver)
        return self._configs[driver]

    def _module(self, workload: str, params: dict, device: xt.Device, warnings: list):
        """(runtime config, load): load() returns the module's function,
        getting the module (compile or cache) the first time; on the CPU it
        runs inside the first, compile_ms call. A module that cannot be had
        is refused here, before any timing."""
        target = iree_targets.for_device(device.kind)
        label, mlir = iree_mlir.for_params(workload, params)
        if not iree_cache.obtainable(target, mlir):
            raise xt.Unsupported(iree_cache.missing_message(target, mlir, label))
        config = self._config(device.kind)
        state = {}

        def load():
            if "fn" not in state:
                vmfb, how = iree_cache.get(target, mlir, label)
                t0 = time.perf_counter()
                ctx = rt.SystemContext(config=config)
                ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
                state["ctx"], state["fn"] = ctx, ctx.modules.module[workload]
                load_ms = (time.perf_counter() - t0) * 1e3
                if how["how"] == "compiled":
                    what = (f"compiled here by iree-compile {iree_cache.version()} for {target.name} "
                            f"({target.describe()}) in {how['ms']:.0f} ms")
                else:
                    what = (f"NOT compiled here: read from the compile cache {how['path']} "
                            f"({how['ms']:.0f} ms to read; compiled earlier for {target.name}, "
                            "by this or another machine)")
                warnings.append(f"compile_ms includes getting the module: {what}; loading it {load_ms:.0f} ms")
            return state["fn"]
        return config, load

    def prepare_gemm(self, cfg, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        warnings = []
        config, load = self._module("gemm", cfg.to_params(), device, warnings)
        sa, sb, sc = iree_mlir.gemm_shapes(cfg.m, cfg.n, cfg.k, cfg.batch, cfg.layout)
        rng = np.random.default_rng(seed)
        a = rt.asdevicearray(config.device, random_input(rng, sa, cfg.dtype))
        b = rt.asdevicearray(config.device, random_input(rng, sb, cfg.dtype))
        size = np.dtype(np_dtype(cfg.dtype)).itemsize

        def step():
            return load()(a, b)
        return xt.Prepared(step=step, warnings=warnings, compile_ms=_load_early(device, load),
                           memory={"inputs": (int(np.prod(sa)) + int(np.prod(sb))) * size,
                                   "outputs": int(np.prod(sc)) * size})

    def export_gemm(self, cfg, variant: str, device: xt.Device, weights: dict, inputs: dict) -> dict:
        config, load = self._module("gemm", cfg.to_params(), device, [])
        dt = np_dtype(cfg.dtype)
        args = [rt.asdevicearray(config.device, np.ascontiguousarray(inputs[n]).astype(dt)) for n in ("a", "b")]
        c = np.asarray(load()(*args).to_host()).astype(np.float32)
        return {"c": c.reshape(cfg.batch, cfg.m, cfg.n)}

    def _attention_refusal(self, cfg) -> None:
        if cfg.phase != "forward":
            raise xt.Unsupported(f"phase {cfg.phase} of attention: IREE compiles the MLIR it is given and has no "
                                 f"autodiff of its own, and this backend writes only the forward "
                                 f"(iree_linalg_ext.attention); supported: forward")

    def prepare_attention(self, cfg, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        self._attention_refusal(cfg)
        warnings = []
        config, load = self._module("attention", cfg.to_params(), device, warnings)
        rng = np.random.default_rng(seed)
        sq, skv = iree_mlir.attention_shapes(cfg.batch, cfg.heads, cfg.kvh, cfg.seq_len, cfg.kv, cfg.head_dim)
        q, k, v = (rt.asdevicearray(config.device, random_input(rng, s, cfg.dtype)) for s in (sq, skv, skv))
        size = np.dtype(np_dtype(cfg.dtype)).itemsize

        def step():
            return load()(q, k, v)
        return xt.Prepared(step=step, warnings=warnings, compile_ms=_load_early(device, load),
                           memory={"inputs": (int(np.prod(sq)) + 2 * int(np.prod(skv))) * size,
                                   "outputs": int(np.prod(sq)) * size})

    def export_attention(self, cfg, variant: str, device: xt.Device, weights: dict, inputs: dict) -> dict:
        self._attention_refusal(cfg)
        config, load = self._module("attention", cfg.to_params(), device, [])
        dt = np_dtype(cfg.dtype)
        args = [rt.asdevicearray(config.device, np.ascontiguousarray(inputs[n]).astype(dt)) for n in ("q", "k", "v")]
        return {"out": np.asarray(load()(*args).to_host()).astype(np.float32)}
