"""The pytorch/compile variant: model.py with its per-mini-batch step compiled
by torch.compile, and (on a GPU) the whole timed call replayed as one CUDA graph.

Why the step and not the model: dynamo unrolls Python loops, so compiling a
layer or the forward traces L/K mini-batches per layer (128 x 12 at 125m) and
took minutes. The step is one small graph, compiled once per (ttt_type, dtype,
shape) and called L/K times per layer. model.ttt_inner keeps only the serial
chain in it (linear: one product for Q and Kx against [W1; b1], the fused LN-L2
gradient, one product for the update: three kernels) and forms everything else
for all mini-batches before or after the loop; at 125m that took the forward
from 64.5 to 33.3 ms (float32) and 55.8 to 24.9 ms (bfloat16) on an H100.

Why a CUDA graph around the whole call: the step's kernels are tiny, so a
forward is bound by launches (thousands per call). Capturing the complete
timed call once (after the compiled code is warm) and replaying it removes the
launch cost for every kernel, eager dense layers included. torch.compile's own
mode="reduce-overhead" graphs each step call separately and must keep every
step's outputs alive, which is what one whole-call graph avoids.
XBENCH_COMPILE_MODE picks torch.compile's mode (default: inductor's default;
"max-autotune-no-cudagraphs" autotunes the small GEMMs at a much longer
compile), XBENCH_CUDA_GRAPH=0 turns the whole-call graph off.
"""

from __future__ import annotations

import os

import torch

from xbench_pytorch import model as m

MODE = os.environ.get("XBENCH_COMPILE_MODE") or None
USE_GRAPH = os.environ.get("XBENCH_CUDA_GRAPH", "1") != "0"
_STEPS: dict = {}


def compiled_step(ttt_type: str):
    """model.step_linear or step_mlp under torch.compile (cached per process;
    dynamo re-specialises it per dtype and shape on its own)."""
    if ttt_type not in _STEPS:
        fn = m.step_linear if ttt_type == "linear" else m.step_mlp
        # dynamic=False: every call of a run has the same shapes, and a static
        # graph lets inductor pick the best kernels for them.
        _STEPS[ttt_type] = torch.compile(fn, fullgraph=True, dynamic=False, mode=MODE)
    return _STEPS[ttt_type]


def inner(ttt_type: str):
    """A drop-in for model.ttt_inner that runs the compiled step."""
    step = compiled_step(ttt_type)

    def ttt_inner(xq, xk, xv, gate, p, ttt_type_, mini_batch):
        if torch.is_inference_mode_enabled():
            # Parameters made outside inference mode would start the state as
            # normal tensors and every later step as inference tensors: two
            # dispatch-key sets, so dynamo would compile the step twice.
            p = {k: v if v.is_inference() else v.clone() for k, v in p.items()}
        return m.ttt_inner(xq, xk, xv, gate, p, ttt_type_, mini_batch, step=step)
    return ttt_inner


class GraphedCall:
    """step() -> outputs, captured as one CUDA graph on its first call.

    The first call (the contract's compile_ms) runs fn twice on a side stream
    (compiling and warming the allocator), captures it, then replays it; later
    calls only replay. Inputs are the fixed tensors fn closes over, outputs are
    the graph's static tensors. If capture fails, it falls back to calling fn
    and records why in warnings."""

    def __init__(self, fn, warnings: list):
        self.fn, self.warnings = fn, warnings
        self.graph, self.out = None, None
        self.graphed = None  # None until the first call; then True or False

    def __call__(self):
        if self.graphed is None:
            self.graphed = self._capture()
        if not self.graphed:
            return self.fn()
        self.graph.replay()
        return self.out

    def _capture(self) -> bool:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                self.fn()
        torch.cuda.current_stream().wait_stream(side)
        try:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                out = self.fn()
        except Exception as e:  # noqa: BLE001 - an uncapturable op: time the plain calls instead
            torch.cuda.synchronize()
            self.warnings.append(f"CUDA graph capture failed, timing uncaptured calls: {type(e).__name__}: {e}")
            return False
        self.graph, self.out = graph, out
        return True


def timed_step(step, device_kind: str, warnings: list):
    """The timed call of the compile variant: graphed on a GPU (unless
    XBENCH_CUDA_GRAPH=0), plain on cpu."""
    if device_kind == "cpu" or not USE_GRAPH:
        return step
    warnings.append("timed call replayed as one CUDA graph (captured on the first call, inside compile_ms)")
    return GraphedCall(step, warnings)
