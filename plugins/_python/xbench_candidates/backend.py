"""The candidates backend: a folder of ModelNew files, one per problem it
answers, matched by file name ($XBENCH_CANDIDATES/level<N>/<problem file>).
Before a candidate is timed it must pass the correctness gate against the
problem's eager Model on the same device (pytorch's problem.gate); a wrong
or crashing candidate is a failed result, never a timing.

Settings come from the environment, so the configuration (and its key) is
the problem's alone and pairs with the baselines':
  XBENCH_CANDIDATES         the folder (required)
  XBENCH_CANDIDATES_ATOL    gate atol (default 1e-2)
  XBENCH_CANDIDATES_RTOL    gate rtol (default 1e-2)
  XBENCH_CANDIDATES_TRIALS  seeded inputs the gate compares (default 3)
The pytorch backend supplies devices, timers and precision flags.
"""

from __future__ import annotations

import math
import os
import sys

from xbench_pytorch import backend as torch_backend  # the pytorch backend's backend.py
from xbench_candidates import gate
from xbench_pytorch import problem
from xbench_py import guard
from xbench_py import review as xreview
from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_py import problems as xproblems

CAPS = xt.Capabilities(xt.WorkloadCaps("problem", phases=("forward",), devices=torch_backend.DEVICES,
                                       values={"dtype": ("float32",)}))


def _number(name: str, default: float, integer: bool = False):
    text = os.environ.get(name, "")
    if not text:
        return default
    try:
        v = int(text, 10) if integer else float(text)
    except ValueError:
        v = None
    if v is None or not math.isfinite(v) or v < (1 if integer else 0):
        raise xt.Unsupported(f"{name}={text[:80]!r} is not allowed (allowed: "
                             f"{'an integer >= 1' if integer else 'a finite number >= 0'})")
    return v


def settings() -> tuple:
    """(folder, atol, rtol, trials) from the environment."""
    folder = os.environ.get("XBENCH_CANDIDATES", "")
    if not folder or not os.path.isabs(folder) or not os.path.isdir(folder):
        raise xt.Unsupported(f"XBENCH_CANDIDATES={folder[:80]!r} is not an absolute folder of level<N>/ "
                             f"candidate files (xbench problems candidates --candidates DIR sets it)")
    return (folder, _number("XBENCH_CANDIDATES_ATOL", 1e-2), _number("XBENCH_CANDIDATES_RTOL", 1e-2),
            _number("XBENCH_CANDIDATES_TRIALS", 3, integer=True))


class Backend(torch_backend.Backend):
    capabilities = CAPS
    variants = ()
    gemm = None

    def prepare_problem(self, cfg: xw.Problem, variant: str, device: xt.Device, seed: int) -> xt.Prepared:
        folder, atol, rtol, trials = settings()
        precision = problem.set_precision(cfg.precision)  # the gate and the timing, as the baseline's
        mod, path = problem.load(cfg)
        name = os.path.basename(path)
        cand = xproblems.candidate(folder, cfg.level, name)
        if cand is None:
            raise xt.Unsupported(f"no candidate for level{cfg.level}/{name} in {folder}")
        review = xreview.review_file(cand)
        refuse = _reviewed(review)
        prepared = refuse(_gated)(cfg, mod, cand, device, seed, (atol, rtol, trials), precision, review)
        prepared.after_call, prepared.after_samples = refuse(prepared.after_call), refuse(prepared.after_samples)
        return prepared

    def export_problem(self, cfg, variant, device, weights, inputs):
        raise xt.Unsupported("candidates are checked by their gate against the eager Model, not by export")


def _reviewed(review: list):
    """A decorator: a refusal (xt.Failed, guard.Tampered) raised by the
    function carries the static review of the file after its own class
    and message, so the reader of a refusal knows where to look."""
    def wrap(fn):
        def call(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except (xt.Failed, guard.Tampered) as e:
                raise xt.Failed(f"{e}" + (f"; static review: {'; '.join(review)}" if review else "")) from None
        return call
    return wrap


def _after_each_call(before: frozenset):
    """The check after every call of the candidate's code (import, build,
    gate, timed calls): nothing the harness times or checks with replaced
    (xbench_py.guard), and no thread the candidate started still alive."""
    def after(what: str = "during the candidate's call") -> None:
        guard.check(what)
        alive = guard.threads_since(before)
        if alive:
            raise xt.Failed(f"background thread: {', '.join(alive)} started by the candidate still alive "
                            f"{what.replace('during', 'after')} (work after the call returns is outside its "
                            f"sample; threads must be joined before forward returns)")
    return after


def _gated(cfg, mod, cand: str, device: xt.Device, seed: int, tolerance: tuple, precision: dict,
           review: list) -> xt.Prepared:
    atol, rtol, trials = tolerance
    after = _after_each_call(guard.threads())
    new_mod = xproblems.import_file(cand, "candidate")
    after("while the candidate file was imported")
    xproblems.require(new_mod, cand, ("ModelNew",))
    dev = problem.torch_device(device)
    new = problem.build(mod, new_mod.ModelNew, dev, seed)
    after("while ModelNew was built")
    seeds = [seed + i for i in range(trials)]
    worst, notes = gate.gate(mod, problem.build(mod, mod.Model, dev, seed), new, dev, seeds, atol, rtol,
                             lambda: after("during a gate call"))
    xs = problem.make_inputs(mod, dev, seed, on_device=True)  # the Model is gone: timing holds these alone
    fn = problem.checked(new)
    reuse, last = gate.ReuseCheck(), []

    def step():
        with problem.torch.no_grad():
            out = fn(*xs)
        last[:] = [out]  # the latest only, for the check after the call (a burst calls without checks)
        return out

    def after_call(what: str = "during the candidate's call") -> None:
        after(what)
        if last:
            out = last.pop()
            reuse.check(out, xs, what.replace("during", "of"))

    def after_samples():
        # A fresh seed: a candidate right only on the gate's inputs, or only
        # before its timed calls, or caching by input identity, is refused.
        gate.recheck(mod, lambda: problem.build(mod, mod.Model, dev, seed), new, xs, dev, seed + trials, atol, rtol,
                     lambda: after("during the check after the timed calls"))

    warnings = [f"correct: {trials} seeded inputs (seeds {seeds[0]}..{seeds[-1]}) within atol {atol:g}, "
                f"rtol {rtol:g} of the eager Model, max abs err {worst:.3g}, and seed {seed + trials} after the "
                f"timed calls; candidate {cand}"]
    warnings += [f"gate note: {n}" for n in notes]
    warnings += [f"static review: {r}" for r in review]
    return xt.Prepared(step=step, num_params=sum(p.numel() for p in new.parameters()), warnings=warnings,
                       settings={**precision, "gate": "pass"}, after_call=after_call,
                       after_samples=after_samples)


# The names this module checks and gates through, as the gate's own
# functions are (xbench_candidates.gate): replaced, the cell is refused.
guard.protect_all("xbench_candidates.backend", sys.modules[__name__],
                  ("guard", "gate", "problem", "xt", "_after_each_call", "_gated", "_reviewed"), kind="gate")
