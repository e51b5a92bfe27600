"""The mamba backbone in jax against the pytorch backend: the causal conv
against the spec's formula (NumPy, float64), forward logits through both
backends' exports (so each one's backbone flag is exercised end to end), and
every gradient of the training step against torch's float64 autograd."""

import numpy as np
import pytest

from xbench_py import workloads as xw
from xbench_py import spec as xs
from xbench_py import runner as xr
from xbench_py import tensors

SIZE = xs.model_size("tiny")
K = 16


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a, np.float64) - b) / np.linalg.norm(b))


@pytest.fixture(scope="module")
def backends():
    from xbench_pytorch import backend as torch_backend
    from xbench_jax import backend

    return {"jax": backend.Backend(), "pytorch": torch_backend.Backend()}


def test_conv_matches_definition():
    import jax.numpy as jnp
    from xbench_jax import model

    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal((2, 9, 5)), rng.standard_normal((5, 4)), rng.standard_normal(5)
    want = np.empty_like(x)  # y[n, t, c] = b[c] + sum_k w[c, k] x[n, t-3+k, c], zeros before each sequence
    for n, t, c in np.ndindex(*x.shape):
        want[n, t, c] = b[c] + sum(w[c, k] * x[n, t - 3 + k, c] for k in range(4) if t - 3 + k >= 0)
    got = model.causal_conv(*(jnp.asarray(a, jnp.float32) for a in (x, w, b)))
    assert got.dtype == jnp.float32
    assert np.abs(np.asarray(got, np.float64) - want).max() < 1e-5 * np.abs(want).max()


@pytest.mark.parametrize("ttt_type,dtype,tol", [("linear", "float32", 1e-5), ("mlp", "float32", 1e-5),
                                                ("mlp", "bfloat16", 5e-2)])
def test_export_matches_pytorch(backends, tmp_path, ttt_type, dtype, tol):
    cfg = xw.TTT(model_size="tiny", ttt_type=ttt_type, seq_len=64, batch=2, dtype=dtype, backbone="mamba")
    wp, ip = str(tmp_path / "w.safetensors"), str(tmp_path / "x.safetensors")
    tensors.write_safetensors(wp, xs.perturbed_params(xs.param_specs(SIZE, ttt_type, K, "mamba")))
    tensors.write_safetensors(ip, {"tokens": xs.random_tokens(2, 64, SIZE.vocab, seed=3)})
    out = {}
    for name, fw in backends.items():
        op = str(tmp_path / f"{name}.safetensors")
        rep = xr.export(fw, cfg, "", "cpu", wp, ip, op)
        assert rep["status"] == "ok", rep
        out[name] = tensors.read_safetensors(op)["logits"]
    assert out["jax"].shape == (2, 64, SIZE.vocab) and np.isfinite(out["jax"]).all()
    assert rel(out["jax"], out["pytorch"].astype(np.float64)) < tol


@pytest.mark.parametrize("ttt_type", ["linear", "mlp"])
def test_backward_matches_torch(ttt_type):
    import jax
    import jax.numpy as jnp
    from xbench_jax import model
    from xbench_pytorch import model as torch_model
    import torch

    w = xs.perturbed_params(xs.param_specs(SIZE, ttt_type, K, "mamba"), seed=11)
    tokens = xs.random_tokens(2, 32, SIZE.vocab, seed=5)
    with jax.default_matmul_precision("highest"):
        loss, grads = jax.jit(lambda p, t: model.forward_backward(p, t, SIZE, ttt_type, K, backbone="mamba"))(
            {k: jnp.asarray(v) for k, v in w.items()}, jnp.asarray(tokens))
    tp = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in w.items()}
    tloss, tgrads = torch_model.forward_backward(tp, torch.tensor(tokens, dtype=torch.long), SIZE, ttt_type, K,
                                                 backbone="mamba")
    assert abs(float(loss) - float(tloss.detach())) < 1e-5 * abs(float(tloss.detach()))
    assert set(grads) == set(w) and "layers.1.ttt.conv_k_w" in grads
    for name, g in grads.items():
        want = tgrads[name].numpy()
        assert np.linalg.norm(want) > 0, name  # every mamba weight is reached by the loss
        assert rel(g, want) < 1e-4, (name, rel(g, want))
