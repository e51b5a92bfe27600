"""The problem workload on PyTorch (docs/workloads/problem.md): a problem
file's Model, eager or under torch.compile, and the correctness gate the
candidates backend runs before it times a ModelNew.

Models are built on the CPU under the seed (torch.manual_seed, then the
class's own initialisation), so one seed gives one set of weights on every
device, and then moved. The timed inputs are made by get_inputs() under the
seed with the device as the default device (fast for large inputs); export
makes them on the CPU, so every device starts from the same numbers.
"""

from __future__ import annotations

import torch

import xbench_contract as xc
import xbench_problems

# Variant -> torch.compile mode (None: eager). Names of KernelBench's
# baseline files follow from the mode (see `xbench problems baseline`).
COMPILE_MODES = {"compile": "default", "compile-max-autotune": "max-autotune-no-cudagraphs"}


def torch_device(device: xc.Device) -> torch.device:
    return torch.device("cpu" if device.kind == "cpu" else "cuda")


def load(cfg: xc.Problem):
    """The problem's module and path."""
    path = cfg.path()
    mod = xbench_problems.import_file(path, "problem")
    xbench_problems.require(mod, path, ("Model", "get_inputs", "get_init_inputs"))
    return mod, path


def build(mod, cls, dev: torch.device, seed: int, dtype=torch.float32) -> torch.nn.Module:
    """cls(*get_init_inputs()) made on the CPU under seed, cast, moved, in eval mode."""
    torch.manual_seed(seed)
    with torch.device("cpu"):
        model = cls(*mod.get_init_inputs())
    # Cast always: parameters take the process's default dtype, which a
    # caller may have changed.
    return model.to(dtype).to(dev).eval()


def make_inputs(mod, dev: torch.device, seed: int, on_device: bool, dtype=torch.float32) -> list:
    """get_inputs() under seed; float tensors cast to dtype, all moved to dev."""
    torch.manual_seed(seed)
    if on_device and dev.type != "cpu":
        with torch.device(dev):
            xs = mod.get_inputs()
    else:
        xs = mod.get_inputs()
    out = []
    for x in xs:
        if torch.is_tensor(x):
            x = x.to(dev, dtype) if x.is_floating_point() else x.to(dev)
        out.append(x)
    return out


def tensors(out) -> list:
    """The tensors of a model's output: itself, or those of a tuple/list."""
    if torch.is_tensor(out):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in tensors(o)]
    raise TypeError(f"the model returned {type(out).__name__}, not a tensor or a tuple of tensors")


def callable_for(model, variant: str, warnings: list):
    """The model itself (eager) or torch.compile of it in the variant's mode."""
    mode = COMPILE_MODES.get(variant)
    if mode is None:
        return model
    torch._dynamo.reset()  # one problem's graphs and guards do not pile up over a set
    warnings.append(f"torch.compile(backend='inductor', mode='{mode}')")
    return torch.compile(model, mode=mode)


def prepare(cfg: xc.Problem, variant: str, device: xc.Device, seed: int) -> xc.Prepared:
    mod, _ = load(cfg)
    dev = torch_device(device)
    model = build(mod, mod.Model, dev, seed)
    xs = make_inputs(mod, dev, seed, on_device=True)
    warnings: list = []
    fn = callable_for(model, variant, warnings)

    def step():
        with torch.no_grad():
            return fn(*xs)
    return xc.Prepared(step=step, num_params=sum(p.numel() for p in model.parameters()), warnings=warnings)


def export(cfg: xc.Problem, variant: str, device: xc.Device, seed: int) -> dict:
    """One untimed call on CPU-made inputs: {"out": the first output tensor}
    as numpy, float64 when the config's dtype is (the reference)."""
    mod, _ = load(cfg)
    dev = torch_device(device)
    dtype = torch.float64 if cfg.dtype == "float64" else torch.float32
    model = build(mod, mod.Model, dev, seed, dtype)
    xs = make_inputs(mod, dev, seed, on_device=False, dtype=dtype)
    fn = callable_for(model, variant, [])
    with torch.no_grad():
        out = tensors(fn(*xs))[0]
    return {"out": out.detach().to("cpu", torch.float64).numpy()}


def compare(ref, new, atol: float, rtol: float) -> tuple:
    """(ok, max abs err, why): every output tensor of new against ref's, by
    torch.allclose(atol, rtol) after checking count and shapes."""
    a, b = tensors(ref), tensors(new)
    if len(a) != len(b):
        return False, float("inf"), f"{len(b)} output tensors, the Model returns {len(a)}"
    worst = 0.0
    ok = True
    for i, (x, y) in enumerate(zip(a, b)):
        if tuple(x.shape) != tuple(y.shape):
            return False, float("inf"), f"output {i} has shape {list(y.shape)}, the Model's is {list(x.shape)}"
        x64, y64 = x.detach().double(), y.detach().to(x.device).double()
        if x64.numel():
            err = (x64 - y64).abs().nan_to_num(nan=float("inf")).max().item()
            worst = max(worst, err)
        ok = ok and bool(torch.allclose(y64, x64, atol=atol, rtol=rtol))
    return ok, worst, ""


def gate(mod, ref_model, new_model, dev: torch.device, seeds: list, atol: float, rtol: float) -> float:
    """Run Model and ModelNew on get_inputs() under each seed (each on its own
    copy, so an in-place candidate cannot change the reference's inputs);
    raise xc.Failed("incorrect: ...") at the first mismatch, else return the
    largest absolute error seen."""
    worst = 0.0
    for s in seeds:
        xs = make_inputs(mod, dev, s, on_device=True)
        with torch.no_grad():
            ref = ref_model(*[x.clone() if torch.is_tensor(x) else x for x in xs])
            new = new_model(*xs)
        ok, err, why = compare(ref, new, atol, rtol)
        if why:
            raise xc.Failed(f"incorrect: {why} (seed {s})")
        if not ok:
            raise xc.Failed(f"incorrect: max abs err {err:.3g} at seed {s} (atol {atol:g}, rtol {rtol:g})")
        worst = max(worst, err)
    return worst
