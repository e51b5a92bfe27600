"""The problem workload on PyTorch (docs/workloads/problem.md): a problem
file's Model, eager or under torch.compile.

Models are built on the CPU under the seed (torch.manual_seed, then the
class's own initialisation), so one seed gives one set of weights on every
device, and then moved. The timed inputs are made by get_inputs() under the
seed with the device as the default device (fast for large inputs); export
makes them on the CPU, so every device starts from the same numbers.
"""

from __future__ import annotations

import torch

from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_py import problems as xproblems

# The seeding every model and input of a problem goes through, taken at
# import, before any candidate file runs: torch.compile's first import
# rebinds torch.manual_seed (to a wrapper that keeps it out of graphs),
# which must neither change what is seeded nor read as tampering.
_manual_seed = torch.manual_seed

# Variant -> torch.compile mode (None: eager). Names of KernelBench's
# baseline files follow from the mode (see `xbench problems baseline`).
COMPILE_MODES = {"compile": "default", "compile-max-autotune": "max-autotune-no-cudagraphs"}

# The precision conventions (the config's "precision"; docs/workloads/problem.md):
# (cuDNN TF32, matmul TF32, reduced-precision reductions in half matmuls).
# kernelbench is PyTorch's own defaults, which KernelBench's scripts never
# change, so its published baselines were timed under them: cuDNN
# convolutions may use TF32, float32 matmuls are IEEE. strict-ieee turns
# every reduced-precision path off.
PRECISIONS = {"kernelbench": (True, False, True), "strict-ieee": (False, False, False)}


def set_precision(name: str) -> dict:
    """Set torch's global precision flags for the convention (they persist
    across the requests of a serve session, so every request sets all of
    them) and return them as read back from torch, for env.settings."""
    if name not in PRECISIONS:
        raise xt.Unsupported(f"precision {name!r} is not one of {', '.join(PRECISIONS)}")
    cudnn_tf32, matmul_tf32, reduced = PRECISIONS[name]
    # set_float32_matmul_precision also moves matmul.allow_tf32, so it goes first.
    torch.set_float32_matmul_precision("high" if matmul_tf32 else "highest")
    torch.backends.cuda.matmul.allow_tf32 = matmul_tf32
    torch.backends.cudnn.allow_tf32 = cudnn_tf32
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = reduced
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = reduced
    m = torch.backends.cuda.matmul
    return {
        "precision": name,
        "torch.backends.cudnn.allow_tf32": str(torch.backends.cudnn.allow_tf32).lower(),
        "torch.backends.cuda.matmul.allow_tf32": str(m.allow_tf32).lower(),
        "torch.float32_matmul_precision": torch.get_float32_matmul_precision(),
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction": str(m.allow_bf16_reduced_precision_reduction).lower(),
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction": str(m.allow_fp16_reduced_precision_reduction).lower(),
    }


def torch_device(device: xt.Device) -> torch.device:
    return torch.device("cpu" if device.kind == "cpu" else "cuda")


def load(cfg: xw.Problem):
    """The problem's module and path."""
    path = cfg.path()
    mod = xproblems.import_file(path, "problem")
    xproblems.require(mod, path, ("Model", "get_inputs", "get_init_inputs"))
    return mod, path


def build(mod, cls, dev: torch.device, seed: int, dtype=torch.float32) -> torch.nn.Module:
    """cls(*get_init_inputs()) made on the CPU under seed, cast, moved, and
    left in training mode: KernelBench builds and times its models so (it
    never calls eval()), and a BatchNorm in eval mode reads its running
    statistics instead of the batch's, other work: on the H100 its level2
    11 and 15 timed 0.85x of KernelBench's own method in eval mode."""
    _manual_seed(seed)
    with torch.device("cpu"):
        model = cls(*mod.get_init_inputs())
    # Cast always: parameters take the process's default dtype, which a
    # caller may have changed.
    return model.to(dtype).to(dev)


def make_inputs(mod, dev: torch.device, seed: int, on_device: bool, dtype=torch.float32) -> list:
    """get_inputs() under seed; float tensors cast to dtype, all moved to dev."""
    _manual_seed(seed)
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
    """The tensors of a model's output: itself, or those of a tuple/list of
    tensors (nested). Anything else (a string, a number, None, an empty
    tuple) is xt.Failed naming its type: it is not a result to time, gate or
    write into a baseline."""
    if torch.is_tensor(out):
        return [out]
    if isinstance(out, (tuple, list)) and out:
        found = []
        for o in out:
            if not (torch.is_tensor(o) or isinstance(o, (tuple, list))):
                raise xt.Failed(f"the model returned a {type(out).__name__} holding a {type(o).__name__}, "
                                f"not a tensor or a tuple or list of tensors")
            found.extend(tensors(o))
        return found
    what = f"an empty {type(out).__name__}" if isinstance(out, (tuple, list)) else f"a {type(out).__name__}"
    raise xt.Failed(f"the model returned {what}, not a tensor or a tuple or list of tensors")


def checked(fn):
    """fn, whose every output is checked to be tensors (tensors()): one type
    test on the common single-tensor path, so the timed call stays the model's."""
    def call(*xs):
        out = fn(*xs)
        if not torch.is_tensor(out):
            tensors(out)
        return out
    return call


def callable_for(model, variant: str, warnings: list):
    """The model itself (eager) or torch.compile of it in the variant's mode."""
    mode = COMPILE_MODES.get(variant)
    if mode is None:
        return model
    torch._dynamo.reset()  # one problem's graphs and guards do not pile up over a set
    warnings.append(f"torch.compile(backend='inductor', mode='{mode}')")
    return torch.compile(model, mode=mode)


def prepare(cfg: xw.Problem, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
    settings = set_precision(cfg.precision)
    mod, _ = load(cfg)
    dev = torch_device(device)
    model = build(mod, mod.Model, dev, seed)
    xs = make_inputs(mod, dev, seed, on_device=True)
    warnings: list = []
    fn = checked(callable_for(model, variant, warnings))

    def step():
        with torch.no_grad():
            return fn(*xs)
    return xt.Prepared(step=step, num_params=sum(p.numel() for p in model.parameters()), warnings=warnings,
                       settings=settings)


def export(cfg: xw.Problem, variant: str, device: xt.Device, seed: int) -> dict:
    """One untimed call on CPU-made inputs: {"out": the first output tensor}
    as numpy, float64 when the config's dtype is (the reference)."""
    set_precision(cfg.precision)
    mod, _ = load(cfg)
    dev = torch_device(device)
    dtype = torch.float64 if cfg.dtype == "float64" else torch.float32
    model = build(mod, mod.Model, dev, seed, dtype)
    xs = make_inputs(mod, dev, seed, on_device=False, dtype=dtype)
    fn = callable_for(model, variant, [])
    with torch.no_grad():
        out = tensors(fn(*xs))[0]
    return {"out": out.detach().to("cpu", torch.float64).numpy()}
