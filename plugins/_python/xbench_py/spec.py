"""Framework-free facts of the TTT model (docs/workloads/ttt.md): sizes, constants,
parameter names and shapes, default initialisation, synthetic inputs.

Every Python backend takes these from here so that they cannot drift apart.
Only the init/input helpers need numpy, and they import it lazily.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from xbench_py.facts import TTT as _TTT

# The spec's constants and size table are the Go harness's declarations
# (harness/workload/ttt, reaching here through xbench_py.facts).
EPS = float(_TTT["norm_eps"])  # RMSNorm and LayerNorm
ROPE_THETA = float(_TTT["rope_theta"])
CONV_WIDTH = _TTT["conv_width"]  # mamba backbone only
INIT_STD = float(_TTT["init_std"])
BASE_LR = {k: float(v) for k, v in _TTT["base_lr"].items()}
MLP_EXPANSION = _TTT["inner_mlp_expansion"]  # inner MLP width is 4f
# A parameter's gradient in a backward-phase export ("grad." + its name),
# as the Go harness's workload/ttt.GradPrefix (docs/ttt-backward.md).
GRAD_PREFIX = _TTT["grad_prefix"]


@dataclass(frozen=True)
class ModelSize:
    name: str
    hidden: int  # C
    layers: int
    heads: int  # nh
    head_dim: int  # f = C / nh
    intermediate: int  # I (SwiGLU width)
    vocab: int  # V


SIZES = {
    s["name"]: ModelSize(s["name"], s["hidden"], s["layers"], s["heads"], s["head_dim"], s["mlp"], s["vocab"])
    for s in _TTT["sizes"]
}
# Accepted on input; results always carry the canonical name (the schema's enum).
SIZE_ALIASES = dict(_TTT["size_aliases"])


def model_size(name: str) -> ModelSize:
    """The size row for a name or alias; KeyError for an unknown one."""
    return SIZES[SIZE_ALIASES.get(name, name)]


@dataclass(frozen=True)
class ParamSpec:
    name: str
    shape: tuple[int, ...]
    init: str  # "normal" (N(0, INIT_STD)), "ones" or "zeros"


def inner_param_specs(size: ModelSize, ttt_type: str, mini_batch: int, layer: int = 0) -> list[ParamSpec]:
    """The inner model's parameters of one layer: what --inner-only uses."""
    nh, f = size.heads, size.head_dim
    p = f"layers.{layer}.ttt."
    hid = f * MLP_EXPANSION if ttt_type == "mlp" else f
    specs = [
        ParamSpec(p + "tok_delta", (mini_batch,), "zeros"),
        ParamSpec(p + "ln_w", (nh, f), "ones"),
        ParamSpec(p + "ln_b", (nh, f), "zeros"),
        ParamSpec(p + "W1", (nh, f, hid), "normal"),
        ParamSpec(p + "b1", (nh, hid), "zeros"),
    ]
    if ttt_type == "mlp":
        specs += [ParamSpec(p + "W2", (nh, hid, f), "normal"), ParamSpec(p + "b2", (nh, f), "zeros")]
    return specs


def param_specs(size: ModelSize, ttt_type: str, mini_batch: int, backbone: str = "transformer") -> list[ParamSpec]:
    """Every parameter of the full model, in the spec's order (as the Go
    harness's workload/ttt.Params lists them)."""
    C, nh, I, V = size.hidden, size.heads, size.intermediate, size.vocab
    specs = [ParamSpec("embed", (V, C), "normal")]
    for l in range(size.layers):
        p = f"layers.{l}."
        if backbone == "mamba":
            specs += [
                ParamSpec(p + "conv_norm", (C,), "ones"),
                ParamSpec(p + "conv_w", (C, CONV_WIDTH), "normal"),
                ParamSpec(p + "conv_b", (C,), "zeros"),
            ]
        specs.append(ParamSpec(p + "ttt_norm", (C,), "ones"))
        # mamba shares one projection for Q and K, so it has no wk.
        proj = ("wq", "wv", "wo", "wg") if backbone == "mamba" else ("wq", "wk", "wv", "wo")
        specs += [ParamSpec(p + "ttt." + w, (C, C), "normal") for w in proj]
        if backbone == "mamba":
            for qk in ("q", "k"):
                specs += [
                    ParamSpec(p + f"ttt.conv_{qk}_w", (C, CONV_WIDTH), "normal"),
                    ParamSpec(p + f"ttt.conv_{qk}_b", (C,), "zeros"),
                ]
        specs += [ParamSpec(p + "ttt.lr_w", (nh, C), "normal"), ParamSpec(p + "ttt.lr_b", (nh,), "zeros")]
        specs += inner_param_specs(size, ttt_type, mini_batch, l)
        specs += [
            ParamSpec(p + "ttt.post_norm_w", (C,), "ones"),
            ParamSpec(p + "ttt.post_norm_b", (C,), "zeros"),
            ParamSpec(p + "mlp_norm", (C,), "ones"),
            ParamSpec(p + "mlp.w_gate", (C, I), "normal"),
            ParamSpec(p + "mlp.w_up", (C, I), "normal"),
            ParamSpec(p + "mlp.w_down", (I, C), "normal"),
        ]
    specs.append(ParamSpec("final_norm", (C,), "ones"))
    return specs


def count_params(specs: list[ParamSpec]) -> int:
    total = 0
    for s in specs:
        n = 1
        for d in s.shape:
            n *= d
        total += n
    return total


def _stream(seed: int, name: str):
    import numpy as np

    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def init_params(specs: list[ParamSpec], seed: int = 0) -> dict:
    """Default initialisation as float32 numpy arrays.

    Each tensor draws from its own stream, default_rng([seed, crc32(name)]), so
    a tensor's values depend only on the seed and its name, not on which other
    tensors are made (layer 0's inner parameters are the same for an
    --inner-only run and for the full model)."""
    import numpy as np

    out = {}
    for s in specs:
        if s.init == "normal":
            out[s.name] = _stream(seed, s.name).standard_normal(s.shape, dtype=np.float32) * np.float32(INIT_STD)
        elif s.init == "ones":
            out[s.name] = np.ones(s.shape, np.float32)
        else:
            out[s.name] = np.zeros(s.shape, np.float32)
    return out


def perturbed_params(specs: list[ParamSpec], seed: int = 7) -> dict:
    """Weights away from their initial values (norm weights near 1, nonzero
    biases and tok_delta), as float32 numpy arrays: the spec asks verification
    to use such weights, or bugs in those terms hide. For tests that compare
    backends on shared weights; `xbench verify` writes its own from Go."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = {}
    for s in specs:
        scale = {"normal": 0.3 if ".W" in s.name else 0.05, "ones": 0.1, "zeros": 0.1}[s.init]
        base = 1.0 if s.init == "ones" else 0.0
        out[s.name] = (base + scale * rng.standard_normal(s.shape)).astype(np.float32)
    return out


def random_tokens(batch: int, seq_len: int, vocab: int, seed: int = 0):
    """Uniform token ids [B, L] as int32."""
    import numpy as np

    return _stream(seed, "tokens").integers(0, vocab, (batch, seq_len), dtype=np.int32)


def random_inner_inputs(batch: int, size: ModelSize, seq_len: int, seed: int = 0) -> dict:
    """Inputs of an --inner-only run: xq/xk/xv ~ N(0, 0.5^2) [B, nh, L, f] and
    gate = sigmoid(N(0, 1)) [B, nh, L], all float32."""
    import numpy as np

    shape = (batch, size.heads, seq_len, size.head_dim)
    out = {k: _stream(seed, k).standard_normal(shape, dtype=np.float32) * np.float32(0.5) for k in ("xq", "xk", "xv")}
    logits = _stream(seed, "gate").standard_normal(shape[:3], dtype=np.float32)
    out["gate"] = (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)
    return out
