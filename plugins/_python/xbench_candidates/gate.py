"""The candidates' correctness gate (docs/workloads/problem.md,
"Correctness"): ModelNew against the eager Model on fresh seeded inputs,
before the candidate is timed, and once more after its timed calls.

Every refusal is xt.Failed whose message starts with the class of what was
wrong ("incorrect", "wrong dtype", "wrong device", "wrong layout", "tensor
subclass", "non-finite output", "wrong after timing"), then the seed.

The candidate runs first on each seed, before the Model has made that
seed's output, so a candidate that returns uninitialised memory cannot be
handed the Model's freed output by an allocator; on CUDA the caching
allocator's free blocks are also filled with NaN bit patterns before each
candidate call (poison_free_blocks), so memory a candidate did not write
reads as NaN, which no comparison passes.
"""

from __future__ import annotations

import sys

import torch

from xbench_py import guard
from xbench_py import types as xt
from xbench_pytorch import problem

# Elements compared at a time: the gate's float64 working memory stays about
# half a GiB beside the outputs, however large they are (a float64 copy of
# each whole output would be twice its size again).
CHUNK = 1 << 24


def close(x, y, atol: float, rtol: float) -> tuple:
    """(ok, max abs err, non-finite) of y against the reference x:
    torch.allclose's rule (|y - x| <= atol + rtol * |x|, equal infinities
    close, NaN never), computed in float64 a chunk at a time; non-finite
    counts y's NaN and infinite values that are not the reference's own
    infinity at that place."""
    x, y = x.detach(), y.detach().to(x.device)
    xf, yf = x.contiguous().reshape(-1), y.contiguous().reshape(-1)
    ok, worst, bad = True, 0.0, 0
    for i in range(0, xf.numel(), CHUNK):
        a, b = xf[i:i + CHUNK].double(), yf[i:i + CHUNK].double()
        d = (b - a).abs()
        worst = max(worst, d.nan_to_num(nan=float("inf")).max().item())
        same = a == b
        if not bool(((d <= atol + rtol * a.abs()) | same).all().item()):
            ok = False  # a non-finite value is never close, so only a failing chunk is counted
            bad += int((~torch.isfinite(b) & ~same).sum().item())
    return ok, worst, bad


def _structure(i: int, x, y) -> str:
    """Why output i of the candidate (y) cannot be compared with the Model's
    (x), or "". Strides are not compared: a non-contiguous output holding the
    right values is what a consumer of the Model's output reads too (the
    Model's own output may be a view), and KernelBench accepts it."""
    if type(y) is not torch.Tensor and not isinstance(y, torch.nn.Parameter):
        return (f"tensor subclass: output {i} is a {type(y).__module__}.{type(y).__qualname__}, not a plain "
                f"torch.Tensor (a subclass can defer its work past the timed call)")
    if y.dtype != x.dtype:
        return f"wrong dtype: output {i} is {y.dtype}, the Model's is {x.dtype}"
    if y.device != x.device:
        return f"wrong device: output {i} is on {y.device}, the Model's on {x.device}"
    if y.layout != x.layout:
        return f"wrong layout: output {i} is {y.layout}, the Model's is {x.layout}"
    if tuple(x.shape) != tuple(y.shape):
        return f"incorrect: output {i} has shape {list(y.shape)}, the Model's is {list(x.shape)}"
    return ""


def compare(ref, new, atol: float, rtol: float) -> tuple:
    """(max abs err, why, notes): every output tensor of new against ref's.
    why is "" when they agree, else the refusal's message (its class first);
    notes name outputs whose strides differ from the Model's (not a refusal)."""
    a, b = problem.tensors(ref), problem.tensors(new)
    if len(a) != len(b):
        return float("inf"), f"incorrect: {len(b)} output tensors, the Model returns {len(a)}", []
    worst, notes = 0.0, []
    for i, (x, y) in enumerate(zip(a, b)):
        why = _structure(i, x, y)
        if why:
            return float("inf"), why, notes
        if x.stride() != y.stride() and x.numel() > 1:
            notes.append(f"output {i} has strides {list(y.stride())}, the Model's {list(x.stride())}")
        good, err, bad = close(x, y, atol, rtol)
        if bad:
            return float("inf"), f"non-finite output: {bad} NaN or infinite values in output {i}", notes
        worst = max(worst, err)
        if not good:
            return worst, f"incorrect: max abs err {err:.3g}", notes
    return worst, "", notes


def free_block_sizes(snapshot: list) -> list:
    """The byte sizes of the free ("inactive") blocks of a CUDA caching
    allocator snapshot (torch.cuda.memory_snapshot()), largest first."""
    sizes = [b["size"] for seg in snapshot for b in seg.get("blocks", ()) if b.get("state") == "inactive"]
    return sorted((s for s in sizes if s > 0), reverse=True)


def poison_free_blocks(dev: torch.device) -> int:
    """On CUDA: allocate the caching allocator's free blocks, largest first,
    fill them with 0xFF bytes (NaN in every floating type) and free them, so
    that a tensor the candidate allocates and never writes reads NaN instead
    of what an earlier output left there. Best effort (the allocator chooses
    which block serves a request); returns the bytes written. Nothing on
    other devices: the CPU allocator returns freed memory to malloc."""
    if dev.type != "cuda":
        return 0
    torch.cuda.synchronize()
    held, total = [], 0
    for size in free_block_sizes(torch.cuda.memory_snapshot()):
        try:
            t = torch.empty(size, dtype=torch.uint8, device=dev)
        except torch.OutOfMemoryError:
            break
        t.fill_(0xFF)
        held.append(t)
        total += size
    del held
    torch.cuda.synchronize()
    return total


def run_candidate(new_model, xs: list, dev: torch.device, after):
    """The candidate's output on xs, its free memory poisoned first and
    after() (the tampering and thread checks) called once it returns."""
    poison_free_blocks(dev)
    with torch.no_grad():
        out = new_model(*xs)
    after()
    return out


def reference(mod, ref_model, dev: torch.device, seed: int):
    """The Model's output on its own fresh inputs under seed."""
    xs = problem.make_inputs(mod, dev, seed, on_device=True)
    with torch.no_grad():
        out = ref_model(*xs)
    problem.tensors(out)
    return out


def gate(mod, ref_model, new_model, dev: torch.device, seeds: list, atol: float, rtol: float, after) -> tuple:
    """Run ModelNew, then Model, on get_inputs() under each seed; raise
    xt.Failed at the first refusal, else return (largest absolute error,
    notes on strides).

    Lean: besides the two models it holds one set of inputs and the two
    outputs at a time (a problem's inputs can be gigabytes). Each model gets
    its own inputs made under the seed, so an in-place candidate, or Model
    itself writing into its inputs, cannot change what the other one sees.
    Everything of a seed is released before the next seed's inputs are made."""
    worst, notes = 0.0, []
    for s in seeds:
        xs = problem.make_inputs(mod, dev, s, on_device=True)
        new = run_candidate(new_model, xs, dev, after)
        del xs
        ref = reference(mod, ref_model, dev, s)
        err, why, seen = compare(ref, new, atol, rtol)
        del ref, new
        if why:
            raise xt.Failed(f"{why} at seed {s} (atol {atol:g}, rtol {rtol:g})")
        worst = max(worst, err)
        notes += [n for n in seen if n not in notes]
    return worst, notes


def _refill(xs: list, fresh: list) -> None:
    # Its own frame: the fresh inputs are gone when it returns. A problem
    # whose inputs change shape or kind with the seed cannot be refilled in
    # place: its candidate gets the fresh inputs themselves.
    same = len(xs) == len(fresh) and all(
        (torch.is_tensor(x) and torch.is_tensor(f) and x.shape == f.shape and x.dtype == f.dtype)
        or (not torch.is_tensor(x) and not torch.is_tensor(f)) for x, f in zip(xs, fresh))
    if not same:
        xs[:] = fresh
        return
    for i, (x, f) in enumerate(zip(xs, fresh)):
        if torch.is_tensor(x):
            x.copy_(f)
        else:
            xs[i] = f


def recheck(mod, ref_model_fn, new_model, xs: list, dev: torch.device, seed: int, atol: float, rtol: float,
            after) -> float:
    """After the timed calls: refill the timed inputs xs in place with the
    values of seed (the same tensor objects, storage and shapes, so a
    candidate that caches its result by input identity returns a stale one),
    run the candidate on them, and compare with a fresh Model
    (ref_model_fn()) on the seed's own inputs. xt.Failed("wrong after
    timing: ...") if they differ; else the max abs err."""
    _refill(xs, problem.make_inputs(mod, dev, seed, on_device=True))
    new = run_candidate(new_model, xs, dev, after)
    xs.clear()  # the timed inputs are done with
    ref = reference(mod, ref_model_fn(), dev, seed)
    err, why, _ = compare(ref, new, atol, rtol)
    if why:
        raise xt.Failed(f"wrong after timing: {why} at seed {seed} on the timed inputs refilled after the timed "
                        f"calls (it passed its gate before them)")
    return err


class ReuseCheck:
    """Result reuse across calls: after each call of the candidate (outside
    its sample) every floating output that is not an input is filled with
    NaN; an output of the next call in the same storage that still reads
    NaN everywhere was handed back without being computed again (a cache of
    the result keyed by the inputs' identity or version, which the timed
    calls' one set of inputs would otherwise turn into lookups). A candidate
    that writes its result into one buffer it keeps (a preallocated output,
    a CUDA graph's static output) rewrites it and passes. A cache that hands
    back a copy of its values is not caught here (docs/workloads/problem.md,
    "What the clock rules do not catch")."""

    def __init__(self):
        self.poisoned: set = set()

    @staticmethod
    def _ptr(t) -> int:
        return t.untyped_storage().data_ptr()

    def check(self, out, inputs: list, what: str) -> None:
        outs = problem.tensors(out)
        own = {self._ptr(x) for x in inputs if torch.is_tensor(x)}
        for i, t in enumerate(outs):
            if self._ptr(t) in self.poisoned and t.is_floating_point() and t.numel() and bool(torch.isnan(t).all()):
                raise xt.Failed(f"result reuse: output {i} {what} is the storage of an earlier call's output and "
                                f"still holds the NaN the harness wrote into it after that call: the result was "
                                f"handed back, not computed again")
        self.poisoned = set()
        with torch.no_grad():
            for t in outs:
                p = self._ptr(t)
                if t.is_floating_point() and p not in own:  # an input aliased by the output stays as it is
                    t.detach().fill_(float("nan"))
                    self.poisoned.add(p)


# What the gate computes with: a candidate that replaced one (torch.Tensor.abs
# returning zeros) would pass any comparison, so each is checked after every
# candidate call as the clock is (xbench_py.guard), and the cell refused.
guard.protect_all("torch.Tensor", torch.Tensor, (
    "detach", "to", "contiguous", "reshape", "double", "abs", "all", "item", "max", "sum", "nan_to_num", "stride",
    "numel", "copy_", "__sub__", "__le__", "__eq__", "__or__", "__and__", "__invert__", "__mul__", "__add__",
    "__getitem__", "dtype", "device", "shape"), kind="gate")
guard.protect_all("torch", torch, ("isfinite", "is_tensor", "no_grad", "Tensor", "empty"),
                  kind="gate")
guard.protect_all("xbench_candidates.gate", sys.modules[__name__], (
    "close", "compare", "_structure", "gate", "recheck", "run_candidate", "reference", "poison_free_blocks"),
    kind="gate")
guard.protect_all("xbench_pytorch.problem", problem, ("tensors", "make_inputs", "build", "checked", "_manual_seed"),
                  kind="gate")
# Whatever a reference Model may call: a candidate that replaced torch.matmul
# (or any other function of torch, torch.nn.functional, a Tensor or Module
# method) would change the Model's output as well as its own, and both would
# agree. Every callable is recorded here, before any candidate is imported.
# What torch itself rebinds when a candidate uses torch.compile (its first
# import wraps torch.manual_seed): the gate seeds through problem's own
# reference to the original, taken before any candidate ran.
_REBOUND_BY_TORCH = frozenset({"manual_seed"})
for _label, _owner in (("torch", torch), ("torch.nn.functional", torch.nn.functional), ("torch.Tensor", torch.Tensor),
                       ("torch.nn.Module", torch.nn.Module), ("torch.linalg", torch.linalg), ("torch.fft", torch.fft),
                       ("torch.special", torch.special)):
    guard.protect_namespace(_label, _owner, kind="gate", skip=_REBOUND_BY_TORCH)
guard.protect_all("xbench_candidates.gate.ReuseCheck", ReuseCheck, ("check", "_ptr"), kind="gate")
