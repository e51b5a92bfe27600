"""The triton backend's adapter to xbench_py.

It is the pytorch backend (xbench_pytorch.backend: devices, precision flags,
timers, peak memory, initialisation, the dense layers) with the inner loop
swapped for the fused kernel of model.py, and in the backward phase for the
autograd Function of inner_fn.py (that forward, and the inner loop's backward
by hand). Both packages have a model.py and a backend.py: each is imported
by its package name (xbench_triton.model, xbench_pytorch.model).

On cpu the kernel runs in Triton's interpreter. TRITON_INTERPRET must be set
before model.py is imported (its kernels become compiled or interpreted
functions then), so benchmark.py sets it when --device cpu is
asked for, or when no GPU is visible (a serve session on a cpu-only machine);
one process runs one mode, and resolve_device() refuses the other.
"""

from __future__ import annotations

import os

from xbench_pytorch import backend as torch_backend  # the pytorch backend's backend.py
from xbench_py import types as xt
from xbench_py import workloads as xw

DEVICES = ("cpu", "cuda", "rocm")
# gemm.py: the GEMM workload as a Triton kernel (absent: no gemm). It
# defines its kernels on import, after benchmark.py has settled TRITON_INTERPRET.
GEMM = xt.load_module("xbench_triton.gemm")
CAPS = xt.Capabilities(
    # backward: the inner loop's hand-written kernels (inner_fn.py), the
    # rest pytorch autograd; the inner loop's inputs are float32 in every dtype.
    xt.WorkloadCaps("ttt", phases=("forward", "backward", "inner_only"), devices=DEVICES,
                    values={"dtype": ("float32", "bfloat16", "float16"), "ttt_type": ("linear", "mlp"),
                            "backbone": xt.BACKBONES}),
    xt.gemm_caps(GEMM, DEVICES),
    # attention.py: flash-attention forward and backward (tl.arange
    # tiles over the head dim, so powers of two from 16 to 256).
    xt.attention_caps(("cpu", "cuda"), head_dims=(16, 32, 64, 128, 256)),
    # scan.py: the semi-CRF scan, forward for every semiring, the
    # backward of log and max.
    xt.scan_caps(DEVICES),
)


# gemm autotuned once per bucket of shapes (gemm.bucket_tuned): for sweeps
# of many shapes, where tuning every shape costs more GPU time than timing
# it; every result names the config and the shape it was tuned at.
BUCKET_TUNED = xt.Variant(
    "bucket-tuned", "gemm: autotuned at the first shape of each bucket (m, n, k rounded up to powers of two) and "
    "that config reused for the bucket's other shapes, named in env.settings.autotune_config",
    xt.Capabilities(xt.gemm_caps(GEMM, ("cuda",))))


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


INTERPRETER_WARNING = "ran in the Triton interpreter on cpu: a correctness check, not a performance number"


class Backend(torch_backend.Backend):
    framework = "triton"
    capabilities = CAPS
    variants = (BUCKET_TUNED,)
    gemm = GEMM

    def versions(self) -> dict:
        import triton

        v = super().versions()
        v["triton"] = triton.__version__
        if interpreting():
            v["triton_interpreter"] = "TRITON_INTERPRET=1"
        return v

    def resolve_device(self, requested: str) -> xt.Device:
        dev = super().resolve_device(requested)
        # Triton was imported for one mode: the interpreter (cpu) or compiled (gpu).
        if dev.kind == "cpu" and not interpreting():
            raise xt.Unsupported("triton on cpu needs its interpreter, but this process imported triton with "
                                 "TRITON_INTERPRET unset; start it with --device cpu or TRITON_INTERPRET=1")
        if dev.kind != "cpu" and interpreting():
            raise xt.Unsupported(f"this process runs triton in its interpreter (TRITON_INTERPRET=1), so it "
                                 f"cannot use {dev.kind}; start it without TRITON_INTERPRET")
        return dev

    def timer(self, device: xt.Device) -> xt.Timer:
        t = super().timer(device)
        if device.kind == "cpu":
            t.description = "time.perf_counter on cpu, kernel in the Triton interpreter (not a performance number)"
        return t

    _label_kernel = False  # set only while profiling on cpu (profile below)

    def profile(self, device: xt.Device, body, trace_path: str) -> dict:
        # In the interpreter the kernel runs as plain Python, which
        # torch.profiler sees as no op at all: label it, so its host time is
        # a row of its own rather than missing. On a GPU the kernels have
        # their own names on the device and need no label.
        self._label_kernel = device.kind == "cpu"
        try:
            return super().profile(device, body, trace_path)
        finally:
            self._label_kernel = False

    def _kernel_inner(self):
        import torch
        from xbench_triton import inner_fn  # imports triton, after TRITON_INTERPRET is settled

        kernel = inner_fn.ttt_inner  # model.py's, differentiable when autograd asks

        def inner(*args, **kwargs):
            if not self._label_kernel:
                return kernel(*args, **kwargs)
            with torch.profiler.record_function("ttt_inner (Triton interpreter)"):
                return kernel(*args, **kwargs)
        return inner

    def _check(self, cfg: xw.TTT) -> None:
        from xbench_triton import inner_fn
        from xbench_triton import model

        why = model.check_shapes(cfg.size.head_dim, cfg.mini_batch)
        if not why and cfg.backward:
            why = inner_fn.check_shapes(cfg.size.head_dim, cfg.mini_batch)
        if why:
            raise xt.Unsupported(why)

    def prepare_ttt(self, cfg: xw.TTT, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        self._check(cfg)
        prepared = super().prepare_ttt(cfg, variant, device, seed, inner=self._kernel_inner())
        if device.kind == "cpu":
            # Said in the result's warnings too, because that is what a
            # side-by-side table shows next to the number.
            prepared.warnings.append(INTERPRETER_WARNING)
        return prepared

    def prepare_gemm(self, cfg: xw.Gemm, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        if variant == BUCKET_TUNED.name:
            mod, kind = self._gemm_module(cfg, device)
            step = mod.prepare(cfg.to_params(), kind, seed, tune="bucket")
            prepared = xt.Prepared(step=step, num_params=0, compile_ms=float(getattr(step, "compile_ms", 0.0)))
        else:
            prepared = super().prepare_gemm(cfg, variant, device, seed)
        if device.kind == "cpu":
            prepared.warnings.append(INTERPRETER_WARNING)
        if getattr(self.gemm, "LAST_CHOICE", ""):  # which config ran, chosen for this exact shape
            prepared.settings["autotune_config"] = self.gemm.LAST_CHOICE
        return prepared

    def _attention(self, cfg: xw.Attention, device: xt.Device):
        """out = f(q, k, v) through this backend's kernels (autograd runs
        their backward), or Unsupported with the kernels' reason."""
        from xbench_triton import attention  # imports triton, after TRITON_INTERPRET is settled

        why = attention.check_shapes(cfg.batch, cfg.heads, cfg.kvh, cfg.seq_len, cfg.kv, cfg.head_dim,
                                            cfg.dtype, "cpu" if device.kind == "cpu" else "cuda")
        if why:
            raise xt.Unsupported(why)
        causal = cfg.causal
        return lambda q, k, v: attention.attention(q, k, v, causal)

    def prepare_attention(self, cfg: xw.Attention, variant: str, device: xt.Device, seed: int, f=None) -> xt.Prepared:
        prepared = super().prepare_attention(cfg, variant, device, seed, f=self._attention(cfg, device))
        if device.kind == "cpu":
            prepared.warnings.append(INTERPRETER_WARNING)
        return prepared

    def export_attention(self, cfg: xw.Attention, variant: str, device: xt.Device, weights: dict, inputs: dict,
                         f=None) -> dict:
        return super().export_attention(cfg, variant, device, weights, inputs, f=self._attention(cfg, device))

    def prepare_scan(self, cfg: xw.Scan, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        from xbench_pytorch import scan as phases  # the pytorch backend's phases, with our kernels as the forward
        from xbench_triton import scan

        # State: the forward's ring of K rows lives in registers; the
        # backward phases keep every position's alpha (T+1 rows) for the
        # beta pass.
        rows = cfg.T + 1 if cfg.backward else cfg.K
        prepared = phases.prepare(cfg, "cpu" if device.kind == "cpu" else "cuda", seed, scan.scan, rows)
        if device.kind == "cpu":
            prepared.warnings.append(INTERPRETER_WARNING)
        return prepared

    def export_scan(self, cfg: xw.Scan, variant: str, device: xt.Device, weights: dict, inputs: dict) -> dict:
        from xbench_pytorch import scan as phases
        from xbench_triton import scan

        return phases.export(cfg, "cpu" if device.kind == "cpu" else "cuda", inputs, scan.scan)

    def export_ttt(self, cfg: xw.TTT, variant: str, device: xt.Device, weights: dict, inputs: dict) -> dict:
        self._check(cfg)
        return super().export_ttt(cfg, variant, device, weights, inputs, inner=self._kernel_inner())
