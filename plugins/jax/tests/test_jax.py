"""The jax backend against the pytorch backend (same weights, same inputs,
through the contract's safetensors export), its gradients against torch's,
its CLI record against the schema, and its refusals."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from xbench_py import workloads as xw
from xbench_py import spec as xs
from xbench_py import runner as xr
from xbench_py import tensors

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
ENTRY = os.path.join(os.path.dirname(HERE), "benchmark.py")


perturbed = xs.perturbed_params


@pytest.fixture(scope="module")
def backends():
    from xbench_pytorch import backend as torch_backend
    from xbench_jax import backend

    return backend.Backend(), torch_backend.Backend()


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def export_both(backends, tmp_path, cfg):
    size = cfg.size
    specs = (xs.inner_param_specs(size, cfg.ttt_type, cfg.mini_batch) if cfg.inner_only
             else xs.param_specs(size, cfg.ttt_type, cfg.mini_batch))
    inputs = (xs.random_inner_inputs(cfg.batch, size, cfg.seq_len, seed=3) if cfg.inner_only
              else {"tokens": xs.random_tokens(cfg.batch, cfg.seq_len, size.vocab, seed=3)})
    wp, ip = str(tmp_path / "w.safetensors"), str(tmp_path / "x.safetensors")
    tensors.write_safetensors(wp, perturbed(specs))
    tensors.write_safetensors(ip, inputs)
    outs = []
    for fw, name in zip(backends, ("jax", "pytorch")):
        op = str(tmp_path / f"{name}.safetensors")
        rep = xr.export(fw, cfg, "", "cpu", wp, ip, op)
        assert rep["status"] == "ok", rep
        outs.append(next(iter(tensors.read_safetensors(op).values())))
    return outs


@pytest.mark.parametrize("inner_only", [False, True], ids=["forward", "inner_only"])
@pytest.mark.parametrize("ttt_type", ["linear", "mlp"])
def test_export_matches_pytorch(backends, tmp_path, ttt_type, inner_only):
    cfg = xw.TTT(model_size="tiny", ttt_type=ttt_type, seq_len=64, batch=2,
                 phase="inner_only" if inner_only else "forward")
    got, want = export_both(backends, tmp_path, cfg)
    assert got.shape == want.shape and np.isfinite(got).all()
    assert rel(got, want) < 1e-5


def test_bfloat16_close_to_pytorch(backends, tmp_path):
    # Not the same rounding as torch's, only the same model at bf16 accuracy.
    cfg = xw.TTT(model_size="tiny", ttt_type="mlp", seq_len=64, dtype="bfloat16")
    got, want = export_both(backends, tmp_path, cfg)
    assert rel(got, want) < 5e-2


@pytest.mark.parametrize("ttt_type", ["linear", "mlp"])
def test_backward_matches_torch(ttt_type):
    import jax
    import jax.numpy as jnp
    from xbench_jax import model
    from xbench_pytorch import model as torch_model
    import torch

    size, K = xs.model_size("tiny"), 16
    w = perturbed(xs.param_specs(size, ttt_type, K), seed=11)
    tokens = xs.random_tokens(2, 32, size.vocab, seed=5)
    with jax.default_matmul_precision("highest"):
        loss, grads = jax.jit(lambda p, t: model.forward_backward(p, t, size, ttt_type, K))(
            {k: jnp.asarray(v) for k, v in w.items()}, jnp.asarray(tokens))
    tp = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in w.items()}
    tloss, tgrads = torch_model.forward_backward(tp, torch.tensor(tokens, dtype=torch.long), size, ttt_type, K)
    assert abs(float(loss) - float(tloss.detach())) < 1e-5 * abs(float(tloss.detach()))
    assert set(grads) == set(w)
    for name, g in grads.items():
        g, want = np.asarray(g, np.float64), tgrads[name].numpy()
        assert np.isfinite(g).all(), name
        # Every parameter is reached by the loss (a zero gradient would hide a cut graph).
        assert np.linalg.norm(want) > 0, name
        assert rel(g, want) < 1e-4, (name, rel(g, want))  # float32 vs float64: ~1e-6 seen


def test_cli_json_validates(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    with open(os.environ.get("XBENCH_RESULT_SCHEMA") or os.path.join(ROOT, "schema", "result.schema.json")) as f:
        schema = json.load(f)
    r = subprocess.run([sys.executable, ENTRY, "--model-size", "tiny", "--ttt-type", "linear", "--seq-len", "32",
                        "--device", "cpu", "--warmup", "1", "--repeats", "3", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    jsonschema.validate(rec, schema)
    assert rec["backend"] == "jax" and rec["status"] == "ok" and len(rec["samples_ms"]) == 3
    assert "block_until_ready" in rec["env"]["timing"]
    assert rec["num_params"] == xs.count_params(xs.param_specs(xs.model_size("tiny"), "linear", 16))


@pytest.mark.parametrize("change", [{"dtype": "float64"}])
def test_unsupported(backends, change):
    cfg = xw.TTT(model_size="tiny", ttt_type="linear", seq_len=32, warmup=0, repeats=1, **change)
    rec = xr.run(backends[0], cfg, "", "cpu")
    assert rec["status"] == "unsupported", rec
    assert next(iter(change.values())) in rec["message"]


def test_unavailable_device_is_unsupported(backends):
    import jax

    if any(d.platform != "cpu" for d in jax.devices()):
        pytest.skip("a GPU is present")
    rec = xr.run(backends[0], xw.TTT(model_size="tiny", ttt_type="linear", seq_len=32), "", "cuda")
    assert rec["status"] == "unsupported" and "cuda" in rec["message"]


def test_gemm_refusals(backends):
    from xbench_jax import gemm  # noqa: F401  (jax declares gemm: its module must be there)
    rec = xr.run(backends[0], xw.Gemm(m=8, n=8, k=8, dtype="tf32", repeats=1), "", "cpu")
    assert rec["status"] == "unsupported" and "tf32" in rec["message"] and "cpu" in rec["message"]
    rec = xr.run(backends[0], xw.Gemm(m=8, n=8, k=8, phase="backward", repeats=1), "", "cpu")
    assert rec["status"] == "unsupported" and "phase backward" in rec["message"]
