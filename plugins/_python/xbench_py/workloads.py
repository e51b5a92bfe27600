"""What the contract knows of each workload: a typed view of the config's
string params, and the tensors of an export (TTT, Gemm, Problem, Attention,
Scan, VIEWS). It builds on xbench_py.types and xbench_py.spec.

The harness has already validated every config (defaults filled, ranges and
cross-checks such as seq_len % mini_batch done): a view only converts the
canonical strings to Python values. A param that is absent takes the view's
default (the CLI leaves some out); a param that does not convert (an integer
that is not decimal) is a ConfigError, i.e. a broken request.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from xbench_py import facts
from xbench_py import problems as xproblems
from xbench_py import types as xt
from xbench_py.spec import inner_param_specs, model_size, param_specs


# Each view's fields are the workload's params, in the Go declaration's
# order, with its defaults (tests/test_facts.py keeps the names equal).
_TTT, _GEMM, _PROBLEM, _ATTENTION, _SCAN = (facts.defaults(w) for w in ("ttt", "gemm", "problem", "attention", "scan"))


def _convert(cls, params: dict) -> dict:
    out = {}
    for f in fields(cls):
        if f.name in ("phase", "warmup", "repeats") or f.name not in params:
            continue
        value = params[f.name]
        if f.type in (int, "int"):
            try:
                out[f.name] = int(value, 10)
            except (TypeError, ValueError):
                raise xt.ConfigError(f"param {f.name} = {value!r} must be a decimal integer string") from None
        elif f.type in (bool, "bool"):
            if value not in ("true", "false"):
                raise xt.ConfigError(f"param {f.name} = {value!r} must be \"true\" or \"false\"")
            out[f.name] = value == "true"
        else:
            out[f.name] = value
    return out


def _canonical(value) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


class _View:
    """Shared by the views: from_config(Config) and config() (back to a
    protocol Config with string params), so tests and the CLI can write
    TTT(model_size="tiny", phase="inner_only") and pass it to run/export."""

    workload = ""

    @classmethod
    def from_config(cls, cfg: Any):
        return cls(phase=cfg.phase, warmup=cfg.warmup, repeats=cfg.repeats, **_convert(cls, cfg.params))

    def to_params(self) -> dict:
        # bools in the harness's canonical spelling ("true"), not Python's
        return {f.name: _canonical(getattr(self, f.name)) for f in fields(self)
                if f.name not in ("phase", "warmup", "repeats")}

    def config(self):
        return xt.Config(workload=self.workload, phase=self.phase, params=self.to_params(),
                         warmup=self.warmup, repeats=self.repeats)

    @property
    def backward(self) -> bool:
        """Whether the phase takes gradients (backward, or both)."""
        return self.phase in ("backward", "both")


@dataclass
class TTT(_View):
    """The ttt workload's params. phase: forward, backward (the training step:
    forward plus the gradient of the loss) or inner_only."""

    workload = "ttt"
    model_size: str = _TTT["model_size"]
    ttt_type: str = _TTT["ttt_type"]
    batch: int = _TTT["batch"]
    seq_len: int = _TTT["seq_len"]
    mini_batch: int = _TTT["mini_batch"]
    dtype: str = _TTT["dtype"]
    backbone: str = _TTT["backbone"]
    phase: str = facts.phases("ttt")[0]
    warmup: int = 3
    repeats: int = 10

    @property
    def inner_only(self) -> bool:
        return self.phase == "inner_only"

    @property
    def size(self):
        return model_size(self.model_size)

    def check_tensors(self, weights: dict, inputs: dict) -> None:
        """Raise ValueError naming the first missing or misshapen tensor."""
        s = self.size
        if self.inner_only:
            specs = inner_param_specs(s, self.ttt_type, self.mini_batch, 0)
            x = (self.batch, s.heads, self.seq_len, s.head_dim)
            want_in = {"xq": x, "xk": x, "xv": x, "gate": x[:3]}
        else:
            specs = param_specs(s, self.ttt_type, self.mini_batch, self.backbone)
            want_in = {"tokens": (self.batch, self.seq_len)}
        _check_shapes((("weights", weights, {p.name: p.shape for p in specs}), ("inputs", inputs, want_in)))
        if "tokens" in want_in:
            t = inputs["tokens"]
            if t.dtype.kind not in "iu" or t.size and (t.min() < 0 or t.max() >= s.vocab):
                raise ValueError(f"inputs tensor 'tokens' must be integers in [0, {s.vocab})")

    def output_float64(self) -> bool:
        return self.dtype == "float64"


@dataclass
class Gemm(_View):
    """The gemm workload's params: C[batch, m, n] = op(A) @ op(B). layout's
    first letter is A's, the second B's; 'n' is stored as is, 't' transposed:
    A stored [batch, m, k] or [batch, k, m], B stored [batch, k, n] or [batch, n, k]."""

    workload = "gemm"
    m: int = _GEMM["m"]
    n: int = _GEMM["n"]
    k: int = _GEMM["k"]
    batch: int = _GEMM["batch"]
    layout: str = _GEMM["layout"]
    dtype: str = _GEMM["dtype"]
    phase: str = facts.phases("gemm")[0]
    warmup: int = 3
    repeats: int = 10

    def stored_shapes(self) -> tuple:
        return gemm_stored_shapes(self.m, self.n, self.k, self.batch, self.layout)

    def check_tensors(self, weights: dict, inputs: dict) -> None:
        a, b = self.stored_shapes()
        _check_shapes((("inputs", inputs, {"a": a, "b": b}),))

    def output_float64(self) -> bool:
        return False


def gemm_stored_shapes(m: int, n: int, k: int, batch: int, layout: str) -> tuple[tuple, tuple]:
    """The stored shapes of A and B for a layout (the one definition the
    contract and every framework's GEMM module use)."""
    a = (batch, m, k) if layout[0] == "n" else (batch, k, m)
    b = (batch, k, n) if layout[1] == "n" else (batch, n, k)
    return a, b


def parse_gemm(params: dict[str, str]) -> tuple[int, int, int, int, str, str]:
    """(m, n, k, batch, layout, dtype) of a GEMM's string params, checked
    (ValueError) for a framework module called outside the harness (every
    gemm dtype has its storage in xbench_py.dtypes)."""
    try:
        m, n, k, batch = (int(params[x]) for x in ("m", "n", "k", "batch"))
    except (KeyError, ValueError) as e:
        raise ValueError(f"gemm params need decimal m, n, k, batch: {params}") from e
    if min(m, n, k, batch) < 1:
        raise ValueError(f"gemm sizes must be >= 1: {params}")
    layout, dtype = params.get("layout", "nn"), params.get("dtype", "float32")
    if layout not in xt.GEMM_LAYOUTS:
        raise ValueError(f"gemm layout {layout!r} is not one of {xt.GEMM_LAYOUTS}")
    if dtype not in xt.GEMM_DTYPES:
        raise ValueError(f"gemm dtype {dtype!r} is not one of {xt.GEMM_DTYPES}")
    return m, n, k, batch, layout, dtype


@dataclass
class Problem(_View):
    """The problem workload's params: one file of a KernelBench-format set,
    problems/level<level>/<problem>_*.py (problems is absolute). Export's one
    input is "seed": the model and get_inputs() are made under it on the CPU."""

    workload = "problem"
    problems: str = _PROBLEM["problems"]
    level: int = _PROBLEM["level"]
    problem: int = _PROBLEM["problem"]
    dtype: str = _PROBLEM["dtype"]
    # kernelbench (PyTorch's defaults: cuDNN TF32 on, matmul TF32 off) or strict-ieee (both off)
    precision: str = _PROBLEM["precision"]
    phase: str = facts.phases("problem")[0]
    warmup: int = 3
    repeats: int = 10

    def path(self) -> str:
        return xproblems.find(self.problems, self.level, self.problem)

    def check_tensors(self, weights: dict, inputs: dict) -> None:
        _check_shapes((("inputs", inputs, {"seed": (1,)}),))

    def output_float64(self) -> bool:
        return self.dtype == "float64"


@dataclass
class Attention(_View):
    """The attention workload's params (docs/workloads/attention.md): q, out,
    dout [batch, heads, seq_len, head_dim]; k, v [batch, kv_heads, kv_len,
    head_dim]; query head h reads kv head h // (heads // kv_heads). kv_heads 0
    means heads and kv_len 0 means seq_len (the harness keeps the 0 in the
    key); read kvh and kv for the resolved values. phase: forward, backward
    (the backward alone, after a forward made before timing) or both."""

    workload = "attention"
    batch: int = _ATTENTION["batch"]
    heads: int = _ATTENTION["heads"]
    kv_heads: int = _ATTENTION["kv_heads"]
    seq_len: int = _ATTENTION["seq_len"]
    kv_len: int = _ATTENTION["kv_len"]
    head_dim: int = _ATTENTION["head_dim"]
    causal: bool = _ATTENTION["causal"]
    dtype: str = _ATTENTION["dtype"]
    phase: str = facts.phases("attention")[0]
    warmup: int = 3
    repeats: int = 10

    @property
    def kvh(self) -> int:
        return self.kv_heads or self.heads

    @property
    def kv(self) -> int:
        return self.kv_len or self.seq_len

    @property
    def group(self) -> int:
        return self.heads // self.kvh

    @property
    def scale(self) -> float:
        return self.head_dim ** -0.5

    def q_shape(self) -> tuple:
        return (self.batch, self.heads, self.seq_len, self.head_dim)

    def k_shape(self) -> tuple:
        return (self.batch, self.kvh, self.kv, self.head_dim)

    def outputs(self) -> tuple:
        """The tensors an export writes: out, and the gradients when backward."""
        return ("out", "dq", "dk", "dv") if self.backward else ("out",)

    def check(self) -> None:
        """The spec's rules between params, for a framework module called
        outside the harness (which has already enforced them): ValueError."""
        if min(self.batch, self.heads, self.seq_len, self.head_dim) < 1 or min(self.kv_heads, self.kv_len) < 0:
            raise ValueError(f"attention sizes must be >= 1 (kv_heads, kv_len >= 0): {self.to_params()}")
        if self.heads % self.kvh:
            raise ValueError(f"attention kv_heads {self.kv_heads} does not divide heads {self.heads}")
        if self.causal and self.kv != self.seq_len:
            raise ValueError(f"attention causal needs kv_len = seq_len, got seq_len {self.seq_len}, kv_len {self.kv_len}")
        if self.dtype not in xt.ATTENTION_DTYPES:
            raise ValueError(f"attention dtype {self.dtype!r} is not one of {xt.ATTENTION_DTYPES}")

    def check_tensors(self, weights: dict, inputs: dict) -> None:
        want = {"q": self.q_shape(), "k": self.k_shape(), "v": self.k_shape()}
        if self.backward:
            want["dout"] = self.q_shape()
        _check_shapes((("inputs", inputs, want),))

    def output_float64(self) -> bool:
        return False


@dataclass
class Scan(_View):
    """The scan workload's params (docs/workloads/scan.md): the streaming
    semi-Markov CRF. Inputs cum_scores [batch, T+1, C], transition [C, C]
    (transition[c_src, c_dest]), duration_bias [K, C] (a segment of duration
    d uses row d-1), lengths [batch] int64. Outputs out [batch] and, for the
    backward phases, d_cum_scores, d_transition, d_duration_bias: the
    gradients of sum(out). semiring: log (partition), max (Viterbi score),
    entropy (forward only). Every float tensor is in dtype (float32 or
    float64), and so is the arithmetic."""

    workload = "scan"
    T: int = _SCAN["T"]
    K: int = _SCAN["K"]
    C: int = _SCAN["C"]
    batch: int = _SCAN["batch"]
    semiring: str = _SCAN["semiring"]
    dtype: str = _SCAN["dtype"]
    phase: str = facts.phases("scan")[0]
    warmup: int = 3
    repeats: int = 10

    def shapes(self) -> dict:
        """The input tensors' shapes by name."""
        return {"cum_scores": (self.batch, self.T + 1, self.C), "transition": (self.C, self.C),
                "duration_bias": (self.K, self.C), "lengths": (self.batch,)}

    def outputs(self) -> tuple:
        """The tensors an export writes: out, and the gradients when backward."""
        return ("out", "d_cum_scores", "d_transition", "d_duration_bias") if self.backward else ("out",)

    def lengths(self):
        """The spec's fixture lengths as int64 numpy: T - (b*T) // (2*batch);
        prepare uses them too, so timing and verification see the same
        variable lengths."""
        import numpy as np

        b = np.arange(self.batch, dtype=np.int64)
        return self.T - (b * self.T) // (2 * self.batch)

    def streaming_state_rows(self) -> int:
        """Rows of [batch, C] state a streaming scan keeps: a ring of K (two
        for entropy's expectations), or, for the backward phases, that ring
        at every position (what autograd or lax.scan saves)."""
        rings = 2 if self.semiring == "entropy" else 1
        return rings * self.K * (self.T if self.backward else 1)

    def counted_memory(self, state_rows: int, lengths_item: int = 8) -> dict:
        """Prepared.memory of a backend, counted from sizes (not measured):
        the inputs (lengths of lengths_item bytes each), state_rows [batch, C]
        rows of DP state ("state" left out when 0: a backend that cannot
        see its state) and, for the backward phases, the three gradients."""
        item = 8 if self.dtype == "float64" else 4
        n_in = self.batch * (self.T + 1) * self.C + self.C * self.C + self.K * self.C
        mem = {"inputs": n_in * item + lengths_item * self.batch}
        if state_rows:
            mem["state"] = state_rows * self.batch * self.C * item
        if self.backward:
            mem["workspace"] = n_in * item
        return mem

    def check(self) -> None:
        """The spec's rules, for a framework module called outside the
        harness (which has already enforced them): ValueError."""
        if min(self.T, self.K, self.C, self.batch) < 1 or self.K > self.T:
            raise ValueError(f"scan needs T, K, C, batch >= 1 and K <= T: {self.to_params()}")
        if self.semiring not in xt.SCAN_SEMIRINGS:
            raise ValueError(f"scan semiring {self.semiring!r} is not one of {xt.SCAN_SEMIRINGS}")
        if self.dtype not in xt.SCAN_DTYPES:
            raise ValueError(f"scan dtype {self.dtype!r} is not one of {xt.SCAN_DTYPES}")
        if self.semiring == "entropy" and self.backward:
            raise ValueError("scan semiring entropy has the forward phase only")

    def check_tensors(self, weights: dict, inputs: dict) -> None:
        _check_shapes((("inputs", inputs, self.shapes()),))

    def cast_inputs(self, inputs: dict) -> dict:
        """Export's inputs in the config's dtype, lengths as int64 (the
        runner casts other workloads' inputs to float32)."""
        import numpy as np

        ft = np.float64 if self.dtype == "float64" else np.float32
        return {k: t.astype(np.int64 if k == "lengths" else ft, copy=False) for k, t in inputs.items()}

    def output_float64(self) -> bool:
        return self.dtype == "float64"


def _check_shapes(groups) -> None:
    for where, have, want in groups:
        for name, shape in want.items():
            if name not in have:
                raise ValueError(f"{where} file lacks tensor {name!r} {list(shape)}")
            if tuple(have[name].shape) != tuple(shape):
                raise ValueError(f"{where} tensor {name!r} has shape {list(have[name].shape)}, expected {list(shape)}")


# The workloads the contract has a view of. A framework may declare another
# workload too: its prepare_<workload> then gets the plain Config.
VIEWS = {"ttt": TTT, "gemm": Gemm, "problem": Problem, "attention": Attention, "scan": Scan}
