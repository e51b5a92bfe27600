"""The pytorch backend's adapter to xbench_py: capabilities, devices,
precision flags, building a timed step, export, per workload. The TTT model
is in model.py, the GEMM in gemm.py (the contract's base class drives it),
attention in attention.py, the scan in scan.py."""

from __future__ import annotations

import gc

import torch

from xbench_pytorch import model as m
from xbench_py import dtypes as xd
from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_py import spec as xs

GEMM = xt.load_module("xbench_pytorch.gemm")  # gemm.py: the GEMM workload (absent: no gemm)
DEVICES = ("cpu", "cuda", "rocm")

TTT_CAPS = xt.WorkloadCaps(
    "ttt", phases=("forward", "backward", "inner_only"), devices=DEVICES,
    values={"dtype": ("float32", "tf32", "bfloat16", "float16", "float64"), "ttt_type": ("linear", "mlp"),
            "backbone": xt.BACKBONES},
)
# The problem workload (problem.py): eager here, float64 only for the verify reference.
PROBLEM_CAPS = xt.WorkloadCaps("problem", phases=("forward",), devices=DEVICES, values={"dtype": ("float32", "float64")})
PROBLEM_COMPILED = xt.WorkloadCaps("problem", phases=("forward",), devices=DEVICES, values={"dtype": ("float32",)})
# The attention workload (attention.py): every phase and dtype on every
# device, the same for the variants that run everywhere; sdpa-efficient has
# no CPU kernel in torch. A shape or dtype a forced kernel refuses on a GPU is
# answered unsupported at the call, with torch's reasons.
ATTENTION_CAPS = xt.attention_caps(DEVICES)
# The scan workload (scan.py): our streaming scan, every semiring, phase and dtype.
SCAN_CAPS = xt.scan_caps(DEVICES)
ALL = xt.Capabilities(TTT_CAPS, xt.gemm_caps(GEMM, DEVICES), PROBLEM_CAPS, ATTENTION_CAPS, SCAN_CAPS)
# The compile variant: model.py with torch.compile'd inner steps (compiled.py)
# for TTT; torch.compile of the problem's Model (inductor, mode default); of
# the sdpa call for attention.
COMPILE = xt.Variant(
    "compile", "ttt: torch.compile of the per-mini-batch inner step, on a GPU the timed call is one CUDA graph; "
               "problem: torch.compile(Model), inductor, mode default; attention: torch.compile of the sdpa call; "
               "scan: torch.compile of the per-position step (one graph for every position)",
    xt.Capabilities(xt.WorkloadCaps(
        "ttt", phases=("forward", "backward", "inner_only"), devices=DEVICES,
        values={"dtype": ("float32", "tf32", "bfloat16", "float16"), "ttt_type": ("linear", "mlp"),
                "backbone": xt.BACKBONES}), PROBLEM_COMPILED, ATTENTION_CAPS, SCAN_CAPS),
)
COMPILE_MAX_AUTOTUNE = xt.Variant(
    "compile-max-autotune", "problem: torch.compile(Model), inductor, mode max-autotune-no-cudagraphs",
    xt.Capabilities(PROBLEM_COMPILED))

ATTENTION_VARIANTS = (
    xt.Variant("sdpa-flash", "attention: scaled_dot_product_attention forced to its flash kernel (sdpa_kernel)",
               xt.Capabilities(ATTENTION_CAPS)),
    xt.Variant("sdpa-efficient", "attention: scaled_dot_product_attention forced to its memory-efficient kernel "
               "(no CPU kernel)", xt.Capabilities(xt.attention_caps(("cuda", "rocm")))),
    xt.Variant("sdpa-cudnn", "attention: scaled_dot_product_attention forced to its cuDNN kernel (NVIDIA only)",
               xt.Capabilities(xt.attention_caps(("cuda",)))),
    xt.Variant("sdpa-math", "attention: scaled_dot_product_attention forced to its math (composite) kernel",
               xt.Capabilities(ATTENTION_CAPS)),
    xt.Variant("naive", "attention: matmul, float32 softmax, matmul as a user writes it (repeat_interleave for GQA)",
               xt.Capabilities(ATTENTION_CAPS)),
)


def set_precision(dtype: str) -> None:
    """Global matmul flags for this run's dtype (they persist across runs of a
    serve session, so every run sets all of them)."""
    tf32 = xd.of(dtype).tf32
    # set_float32_matmul_precision also moves allow_tf32, so it goes first.
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    # The spec wants float32 accumulation in bf16/fp16 matmuls; cuBLAS may
    # otherwise reduce split-K partial sums in the narrow type.
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False


def _nvidia_driver() -> str:
    try:
        with open("/proc/driver/nvidia/version") as f:
            words = f.readline().split()
        return next(w for w in words if w[:1].isdigit() and "." in w)
    except (OSError, StopIteration):
        return ""


class Backend(xt.Framework):
    framework = "torch"
    capabilities = ALL
    variants = (COMPILE, COMPILE_MAX_AUTOTUNE, *ATTENTION_VARIANTS)
    gemm = GEMM

    def versions(self) -> dict:
        import numpy

        v = {"torch": torch.__version__, "numpy": numpy.__version__}
        if torch.version.cuda:
            v["cuda"] = torch.version.cuda
        if torch.version.hip:
            v["hip"] = torch.version.hip
        if torch.backends.cudnn.is_available():
            v["cudnn"] = str(torch.backends.cudnn.version())
        return v

    def resolve_device(self, requested: str) -> xt.Device:
        gpu = "rocm" if torch.version.hip else "cuda"  # ROCm torch also says "cuda"
        if requested == "cpu" or (requested == "auto" and not torch.cuda.is_available()):
            return xt.Device("cpu", xt.cpu_name(), count=1)
        if requested != "auto" and requested != gpu:
            raise xt.Unsupported(f"device {requested} is not available: this torch {torch.__version__} is built for {gpu}")
        if not torch.cuda.is_available():
            raise xt.Unsupported(f"device {requested} is not available: torch.cuda.is_available() is False "
                                 f"(torch {torch.__version__})")
        driver = _nvidia_driver() if gpu == "cuda" else ""
        return xt.Device(gpu, torch.cuda.get_device_name(0), driver=driver, count=1)

    def timer(self, device: xt.Device) -> xt.Timer:
        return m.CpuTimer() if device.kind == "cpu" else m.gpu_timer()

    def reset_peak_memory(self, device: xt.Device) -> None:
        if device.kind != "cpu":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()

    def peak_memory_bytes(self, device: xt.Device) -> int:
        return 0 if device.kind == "cpu" else torch.cuda.max_memory_allocated()

    def release(self) -> None:
        gc.collect()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.empty_cache()

    def calibrate(self, device: xt.Device, dtypes: list) -> dict:
        """Ceilings for `xbench calibrate` (calibrate.py)."""
        from xbench_pytorch import calibrate

        return calibrate.measure(device.kind, dtypes, set_precision)

    def profile(self, device: xt.Device, body, trace_path: str) -> dict:
        """`xbench profile` under torch.profiler (profile.py); the
        compile variant and the triton backend inherit it."""
        from xbench_pytorch import profile

        return profile.profile(device.kind, body, trace_path)

    def _setup(self, cfg: xw.TTT, device: xt.Device):
        set_precision(cfg.dtype)
        return m.torch_dtype(cfg.dtype), torch.device("cpu" if device.kind == "cpu" else "cuda")

    def _inner(self, cfg: xw.TTT, variant: str, inner):
        """The inner loop for this request: the caller's (the triton backend
        passes its kernel), the compile variant's, or model.ttt_inner."""
        if inner is None and variant == "compile":
            from xbench_pytorch import compiled

            return compiled.inner(cfg.ttt_type)
        return inner or m.ttt_inner

    def prepare_ttt(self, cfg: xw.TTT, variant: str, device: xt.Device, seed: int, inner=None) -> xt.Prepared:
        dtype, dev = self._setup(cfg, device)
        inner = self._inner(cfg, variant, inner)
        size, warnings = cfg.size, []
        if xd.of(cfg.dtype).tf32 and device.kind == "cpu":
            warnings.append("tf32 has no effect on cpu: its float32 matmuls are IEEE either way")
        gen = torch.Generator(device=dev).manual_seed(seed)
        if cfg.inner_only:
            specs = xs.inner_param_specs(size, cfg.ttt_type, cfg.mini_batch, 0)
            p = m.inner_params(_init(specs, dtype, dev, gen), 0)
            shape = (cfg.batch, size.heads, cfg.seq_len, size.head_dim)
            xq, xk, xv = (0.5 * torch.randn(shape, generator=gen, device=dev) for _ in range(3))
            gate = torch.sigmoid(torch.randn(shape[:3], generator=gen, device=dev))
            xq, xk, xv, gate = (t.to(dtype) for t in (xq, xk, xv, gate))

            @torch.inference_mode()
            def step():
                return inner(xq, xk, xv, gate, p, cfg.ttt_type, cfg.mini_batch)
        else:
            if cfg.backward and cfg.seq_len < 2:
                raise xt.Unsupported("backward needs seq_len >= 2: the loss has no labels otherwise")
            specs = xs.param_specs(size, cfg.ttt_type, cfg.mini_batch, cfg.backbone)
            params = _init(specs, dtype, dev, gen)
            tokens = torch.randint(0, size.vocab, (cfg.batch, cfg.seq_len), generator=gen, device=dev)
            if cfg.backward:
                for t in params.values():
                    t.requires_grad_(True)

                def step():
                    return m.forward_backward(params, tokens, size, cfg.ttt_type, cfg.mini_batch, inner, cfg.backbone)
            else:
                @torch.inference_mode()
                def step():
                    return m.forward(params, tokens, size, cfg.ttt_type, cfg.mini_batch, inner, cfg.backbone)
        if variant == "compile":
            from xbench_pytorch import compiled

            step = compiled.timed_step(step, device.kind, warnings)
        return xt.Prepared(step=step, num_params=xs.count_params(specs), warnings=warnings)

    def prepare_problem(self, cfg: xw.Problem, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        from xbench_pytorch import problem

        return problem.prepare(cfg, variant, device, seed)  # under the config's precision convention

    def prepare_attention(self, cfg: xw.Attention, variant: str, device: xt.Device, seed: int, f=None) -> xt.Prepared:
        from xbench_pytorch import attention

        set_precision(cfg.dtype)  # float32 is IEEE: no TF32 in the products
        return xt.Prepared(step=attention.prepare(cfg, variant, _torch_device(device), seed, f=f))

    def export_attention(self, cfg: xw.Attention, variant: str, device: xt.Device, weights: dict, inputs: dict,
                         f=None) -> dict:
        from xbench_pytorch import attention

        set_precision(cfg.dtype)
        return attention.export(cfg, variant, _torch_device(device), inputs, f=f)

    def prepare_scan(self, cfg: xw.Scan, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        from xbench_pytorch import scan

        return scan.prepare(cfg, _torch_device(device), seed, scan.forward_fn(variant), cfg.streaming_state_rows())

    def export_scan(self, cfg: xw.Scan, variant: str, device: xt.Device, weights: dict, inputs: dict) -> dict:
        from xbench_pytorch import scan

        return scan.export(cfg, _torch_device(device), inputs, scan.forward_fn(variant))

    def export_problem(self, cfg: xw.Problem, variant: str, device: xt.Device, weights: dict, inputs: dict) -> dict:
        from xbench_pytorch import problem

        return problem.export(cfg, variant, device, int(inputs["seed"].reshape(-1)[0]))

    def export_ttt(self, cfg: xw.TTT, variant: str, device: xt.Device, weights: dict, inputs: dict,
               inner=None) -> dict:
        dtype, dev = self._setup(cfg, device)
        inner = self._inner(cfg, variant, inner)
        size = cfg.size
        out_dtype = torch.float64 if cfg.dtype == "float64" else torch.float32
        params = {k: torch.from_numpy(v).to(dev, dtype) for k, v in weights.items()}
        if cfg.backward:
            # logits and grad.<name> for every parameter (docs/ttt-backward.md)
            for t in params.values():
                t.requires_grad_(True)
            tokens = torch.from_numpy(inputs["tokens"]).to(dev, torch.long)
            logits, _, grads = m.logits_loss_grads(params, tokens, size, cfg.ttt_type, cfg.mini_batch, inner,
                                                   cfg.backbone)
            out = {"logits": logits.detach().to(out_dtype).cpu().numpy()}
            out.update({xs.GRAD_PREFIX + k: g.to(out_dtype).cpu().numpy() for k, g in grads.items()})
            return out
        with torch.inference_mode():
            if cfg.inner_only:
                x = {k: torch.from_numpy(inputs[k]).to(dev, dtype) for k in ("xq", "xk", "xv", "gate")}
                out = inner(x["xq"], x["xk"], x["xv"], x["gate"], m.inner_params(params, 0),
                            cfg.ttt_type, cfg.mini_batch)
                return {"out": out.to(out_dtype).cpu().numpy()}
            tokens = torch.from_numpy(inputs["tokens"]).to(dev, torch.long)
            logits = m.forward(params, tokens, size, cfg.ttt_type, cfg.mini_batch, inner, cfg.backbone)
            return {"logits": logits.to(out_dtype).cpu().numpy()}


def _torch_device(device: xt.Device) -> str:
    return "cpu" if device.kind == "cpu" else "cuda"  # a ROCm torch calls its GPU "cuda" too


def _init(specs, dtype, dev, gen) -> dict:
    """Default initialisation drawn on the device itself (fast for 1b-size
    models); exports use the weights they are given instead."""
    out = {}
    for s in specs:
        if s.init == "normal":
            t = torch.randn(s.shape, generator=gen, device=dev) * xs.INIT_STD
        elif s.init == "ones":
            t = torch.ones(s.shape, device=dev)
        else:
            t = torch.zeros(s.shape, device=dev)
        out[s.name] = t.to(dtype)
    return out
