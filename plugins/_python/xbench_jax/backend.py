"""The jax backend's adapter to xbench_py: capabilities, devices,
precision, building a jitted timed step, export. The model is in model.py,
the GEMM in gemm.py, attention in attention.py.

The files are named jax_*.py (not model.py/backend.py) so that a test process
can import them next to the pytorch backend's model.py without a clash.
"""

from __future__ import annotations

import gc
import os

# Sweeps share the GPU with other frameworks: allocate on demand instead of
# grabbing most of the memory at start-up. Must be set before jax is imported.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from xbench_jax import model as m  # noqa: E402
from xbench_py import dtypes as xd  # noqa: E402
from xbench_py import types as xt  # noqa: E402
from xbench_py import workloads as xw  # noqa: E402
from xbench_py import spec as xs  # noqa: E402

# float64 would need jax_enable_x64 process-wide, which changes every other
# run's defaults; it is left out.
DEVICES = ("cpu", "cuda", "rocm")
GEMM = xt.load_module("xbench_jax.gemm")  # gemm.py: the GEMM workload (absent: no gemm)
CAPS = xt.Capabilities(
    xt.WorkloadCaps("ttt", phases=("forward", "backward", "inner_only"), devices=DEVICES,
                    values={"dtype": ("float32", "tf32", "bfloat16", "float16"), "ttt_type": ("linear", "mlp"),
                            "backbone": xt.BACKBONES}),
    xt.gemm_caps(GEMM, DEVICES),
    xt.attention_caps(DEVICES),
    # scan (scan.py): lax.scan, every semiring and phase, float32 (see above).
    xt.scan_caps(DEVICES, dtypes=("float32",)),
)
# attention (attention.py): the variants are dot_product_attention's
# implementations; cuDNN's fused kernel exists only on NVIDIA GPUs and for
# 16-bit dtypes, so the harness answers the rest without a call.
VARIANTS = (
    xt.Variant("xla", "attention: jax.nn.dot_product_attention(implementation='xla')",
               xt.Capabilities(xt.attention_caps(DEVICES))),
    xt.Variant("cudnn", "attention: jax.nn.dot_product_attention(implementation='cudnn'), cuDNN's fused kernel",
               xt.Capabilities(xt.attention_caps(("cuda",), dtypes=("bfloat16", "float16")))),
)
GPU_PLATFORMS = ("cuda", "rocm")  # jax's platform names for its GPU plugins


def _devices(platform: str) -> list:
    try:
        return jax.devices(platform)
    except RuntimeError:  # that platform's plugin is not installed or found no device
        return []


class Backend(xt.Framework):
    framework = "jax"
    capabilities = CAPS
    variants = VARIANTS
    gemm = GEMM

    def __init__(self):
        self._gpu_runs = 0  # peak_bytes_in_use cannot be reset: see peak_memory_bytes

    def versions(self) -> dict:
        import jaxlib

        v = {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "numpy": np.__version__}
        for d in _devices("cuda") + _devices("rocm"):
            v["gpu_platform"] = str(getattr(d.client, "platform_version", ""))
            break
        return v

    def resolve_device(self, requested: str) -> xt.Device:
        if requested == "auto":
            requested = next((p for p in GPU_PLATFORMS if _devices(p)), "cpu")
        devs = _devices(requested)
        if not devs:
            have = [p for p in ("cpu",) + GPU_PLATFORMS if _devices(p)]
            raise xt.Unsupported(f"device {requested} is not available to jax {jax.__version__} "
                                 f"(no {requested} plugin or device); available: {', '.join(have)}")
        d = devs[0]
        name = xt.cpu_name() if requested == "cpu" else d.device_kind
        driver = "" if requested == "cpu" else str(getattr(d.client, "platform_version", ""))
        self._jax_device = d
        return xt.Device(requested, name, driver=driver, count=1)

    def timer(self, device: xt.Device) -> xt.Timer:
        return m.BlockTimer(device.kind)

    def peak_memory_bytes(self, device: xt.Device) -> int:
        # memory_stats() is None on cpu; on a GPU its peak counts from process
        # start (jax has no reset), which prepare() warns about after the first run.
        stats = self._jax_device.memory_stats() if device.kind != "cpu" else None
        return int((stats or {}).get("peak_bytes_in_use", 0))

    def release(self) -> None:
        # Every prepare() jits fresh functions; their executables go with them
        # (jax caches per function object), while jax.random's stay cached.
        gc.collect()

    def profile(self, device: xt.Device, body, trace_path: str) -> dict:
        """`xbench profile` under jax.profiler (profile.py)."""
        from xbench_jax import profile

        return profile.profile(device.kind, body, trace_path)

    def _put(self, arrays: dict, dtype) -> dict:
        return {k: jax.device_put(jnp.asarray(v, dtype), self._jax_device) for k, v in arrays.items()}

    def _jit(self, fn, cfg: xw.TTT):
        """fn traced under this dtype's matmul precision (part of jit's cache
        key, so every run gets the precision it asked for)."""
        prec = m.matmul_precision(cfg.dtype)

        def traced(*args):
            with jax.default_matmul_precision(prec):
                return fn(*args)
        return jax.jit(traced)

    def _peak_warning(self, device: xt.Device, warnings: list) -> None:
        if device.kind != "cpu":
            if self._gpu_runs:
                warnings.append("peak_memory_bytes is jax's peak_bytes_in_use since process start "
                                "(it cannot be reset), so it may include earlier requests")
            self._gpu_runs += 1

    def prepare_gemm(self, cfg: xw.Gemm, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        prepared = super().prepare_gemm(cfg, variant, device, seed)
        self._peak_warning(device, prepared.warnings)
        if getattr(prepared.step, "kernel", ""):  # what XLA compiled the product to (its autotuner's pick)
            prepared.settings["xla_kernel"] = prepared.step.kernel
        return prepared

    def prepare_attention(self, cfg: xw.Attention, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        from xbench_jax import attention

        warnings = []
        self._peak_warning(device, warnings)
        return xt.Prepared(step=attention.prepare(cfg, variant, self._jax_device, seed), warnings=warnings)

    def export_attention(self, cfg: xw.Attention, variant: str, device: xt.Device, weights: dict, inputs: dict) -> dict:
        from xbench_jax import attention

        return attention.export(cfg, variant, self._jax_device, inputs)

    def prepare_scan(self, cfg: xw.Scan, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        from xbench_jax import scan

        prepared = scan.prepare(cfg, self._jax_device, seed)
        self._peak_warning(device, prepared.warnings)
        return prepared

    def export_scan(self, cfg: xw.Scan, variant: str, device: xt.Device, weights: dict, inputs: dict) -> dict:
        from xbench_jax import scan

        return scan.export(cfg, self._jax_device, inputs)

    def prepare_ttt(self, cfg: xw.TTT, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        size, dtype, warnings = cfg.size, m.jax_dtype(cfg.dtype), []
        if xd.of(cfg.dtype).tf32 and device.kind != "cuda":
            warnings.append(f"tf32 has no effect on {device.kind}: float32 dots with DEFAULT precision are IEEE there")
        self._peak_warning(device, warnings)
        key = jax.random.PRNGKey(seed)
        if cfg.inner_only:
            specs = xs.inner_param_specs(size, cfg.ttt_type, cfg.mini_batch, 0)
            p = {k.rsplit(".", 1)[1]: v for k, v in self._init(specs, dtype, key).items()}
            shape = (cfg.batch, size.heads, cfg.seq_len, size.head_dim)
            ks = jax.random.split(jax.random.fold_in(key, 1), 4)
            with jax.default_device(self._jax_device):
                x = [(0.5 * jax.random.normal(ks[i], shape)).astype(dtype) for i in range(3)]
                gate = jax.nn.sigmoid(jax.random.normal(ks[3], shape[:3])).astype(dtype)
            unroll = m.scan_unroll(device.kind)
            fn = self._jit(lambda q, k, v, g, p: m.ttt_inner(q, k, v, g, p, cfg.ttt_type, cfg.mini_batch, unroll), cfg)

            def step():
                return fn(*x, gate, p)
        else:
            if cfg.backward and cfg.seq_len < 2:
                raise xt.Unsupported("backward needs seq_len >= 2: the loss has no labels otherwise")
            specs = xs.param_specs(size, cfg.ttt_type, cfg.mini_batch, cfg.backbone)
            params = self._init(specs, dtype, key)
            tokens = jax.device_put(jnp.asarray(xs.random_tokens(cfg.batch, cfg.seq_len, size.vocab, seed)),
                                    self._jax_device)
            phase, unroll = (m.forward_backward if cfg.backward else m.forward), m.scan_unroll(device.kind)
            fn = self._jit(lambda prm, tok: phase(prm, tok, size, cfg.ttt_type, cfg.mini_batch, unroll, cfg.backbone),
                           cfg)

            def step():
                return fn(params, tokens)
        return xt.Prepared(step=step, num_params=xs.count_params(specs), warnings=warnings)

    def _init(self, specs, dtype, key) -> dict:
        """Default initialisation drawn on the device itself (fast at 1b);
        exports use the weights they are given instead."""
        out = {}
        with jax.default_device(self._jax_device):
            for i, s in enumerate(specs):
                if s.init == "normal":
                    t = xs.INIT_STD * jax.random.normal(jax.random.fold_in(key, 100 + i), s.shape)
                else:
                    t = (jnp.ones if s.init == "ones" else jnp.zeros)(s.shape)
                out[s.name] = t.astype(dtype)
        return out

    def export_ttt(self, cfg: xw.TTT, variant: str, device: xt.Device, weights: dict, inputs: dict) -> dict:
        dtype, unroll = m.jax_dtype(cfg.dtype), m.scan_unroll(device.kind)
        params = self._put(weights, dtype)
        if cfg.inner_only:
            pre = "layers.0.ttt."
            p = {k[len(pre):]: v for k, v in params.items() if k.startswith(pre)}
            x = self._put({k: inputs[k] for k in ("xq", "xk", "xv", "gate")}, dtype)
            fn = self._jit(lambda q, k, v, g, p: m.ttt_inner(q, k, v, g, p, cfg.ttt_type, cfg.mini_batch, unroll), cfg)
            return {"out": np.asarray(fn(x["xq"], x["xk"], x["xv"], x["gate"], p), np.float32)}
        tokens = jax.device_put(jnp.asarray(inputs["tokens"], jnp.int32), self._jax_device)
        if cfg.backward:
            # logits and grad.<name> for every parameter (docs/ttt-backward.md)
            grad = jax.grad(m.loss_and_logits, has_aux=True)
            fn = self._jit(lambda prm, tok: grad(prm, tok, cfg.size, cfg.ttt_type, cfg.mini_batch, unroll,
                                                 cfg.backbone), cfg)
            grads, logits = fn(params, tokens)
            out = {"logits": np.asarray(logits.astype(jnp.float32))}
            out.update({xs.GRAD_PREFIX + k: np.asarray(g.astype(jnp.float32)) for k, g in grads.items()})
            return out
        fn = self._jit(lambda prm, tok: m.forward(prm, tok, cfg.size, cfg.ttt_type, cfg.mini_batch, unroll,
                                                  cfg.backbone), cfg)
        return {"logits": np.asarray(fn(params, tokens).astype(jnp.float32))}
