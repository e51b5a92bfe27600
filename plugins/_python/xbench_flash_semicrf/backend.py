"""The flash-semicrf backend's adapter: the pytorch backend (devices, CUDA-event
timer, peak memory, the scan's phase machinery in scan.py) with the forward
swapped for flash-semicrf's own streaming API,

    flash_semicrf.streaming.semi_crf_streaming_forward(cum_scores, transition,
        duration_bias, lengths, K, semiring=..., use_triton=...)

called as its users call it, so what is timed is the package: its Triton
forward and backward kernels on a GPU, its PyTorch streaming reference on the
CPU (the package's own dispatch; K < 3 takes its special paths). Gradients
come from the package's autograd Functions; it refuses gradients of max
(answered unsupported). Its streaming API has the log and max semirings
only, so entropy is not declared. Its Triton kernels compute in
float64 internally whatever the input dtype (its documentation says so); the
inputs and output are in the config's dtype.

Variants: "triton" (use_triton=True on a GPU only, so a CPU run cannot
silently measure the fallback) and "reference" (use_triton=False: the
package's PyTorch streaming reference, on every device).
"""

from __future__ import annotations

from xbench_pytorch import backend as torch_backend  # the pytorch backend's backend.py
from xbench_py import types as xt
from xbench_py import workloads as xw

DEVICES = ("cpu", "cuda", "rocm")
SEMIRINGS = ("log", "max")
CAPS = xt.Capabilities(xt.scan_caps(DEVICES, semirings=SEMIRINGS))
VARIANTS = (
    xt.Variant("triton", "semi_crf_streaming_forward(use_triton=True) on a GPU: the package's Triton kernels, forward and backward",
               xt.Capabilities(xt.scan_caps(("cuda", "rocm"), semirings=SEMIRINGS))),
    xt.Variant("reference", "semi_crf_streaming_forward(use_triton=False): the package's PyTorch streaming reference",
               xt.Capabilities(xt.scan_caps(DEVICES, semirings=SEMIRINGS))),
)


def forward_fn(variant: str):
    """out = f(cum, trans, dur, lengths, cfg) through the package."""
    from flash_semicrf.streaming import semi_crf_streaming_forward

    if variant not in ("", "triton", "reference"):
        raise ValueError(f"flash-semicrf: unknown variant {variant!r} (known: default, triton, reference)")
    use_triton = variant != "reference"

    def f(cum, trans, dur, lengths, cfg):
        return semi_crf_streaming_forward(cum, trans, dur, lengths, cfg.K, semiring=cfg.semiring, use_triton=use_triton)
    return f


def _refuse(cfg: xw.Scan) -> None:
    # The package raises ValueError for gradients of max ("not
    # differentiable"): that is its answer, recorded as unsupported.
    if cfg.semiring == "max" and cfg.backward:
        raise xt.Unsupported("flash-semicrf has no gradient of the max semiring (its autograd refuses it: the Viterbi "
                             "score is piecewise linear and it returns no subgradient); supported with max: forward")


class Backend(torch_backend.Backend):
    framework = "flash-semicrf"
    capabilities = CAPS
    variants = VARIANTS
    gemm = None

    def versions(self) -> dict:
        from importlib.metadata import version

        v = super().versions()
        v["flash_semicrf"] = version("flash-semicrf")
        try:
            import triton

            v["triton"] = triton.__version__
        except ImportError:
            pass
        return v

    def prepare_scan(self, cfg: xw.Scan, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        from xbench_pytorch import scan

        _refuse(cfg)
        # The package's buffers are its own: state 0 counts the inputs (and
        # the gradients of the backward phases) only; peak_memory_bytes
        # measures the rest.
        return scan.prepare(cfg, torch_backend._torch_device(device), seed, forward_fn(variant), 0)

    def export_scan(self, cfg: xw.Scan, variant: str, device: xt.Device, weights: dict, inputs: dict) -> dict:
        from xbench_pytorch import scan

        _refuse(cfg)
        return scan.export(cfg, torch_backend._torch_device(device), inputs, forward_fn(variant))
