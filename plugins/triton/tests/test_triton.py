"""The fused kernels under Triton's interpreter against the pytorch backend's
inner loop (float64), the backend's exports against the pytorch backend's,
its CLI record against the schema, and its refusals."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from xbench_py import workloads as xw
from xbench_py import spec as xs
from xbench_py import runner as xr
from xbench_py import tensors

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
ENTRY = os.path.join(os.path.dirname(HERE), "benchmark.py")


perturbed = xs.perturbed_params


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a, np.float64) - b) / np.linalg.norm(b))


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.bfloat16, 2e-2)], ids=["float32", "bfloat16"])
# f=96 (760m) and f=33 run padded to 128 and 64 (and the mlp's hidden 132 to
# 160): the padded lanes must stay zero through three mini-batches.
@pytest.mark.parametrize("f,B", [(16, 2), (64, 2), (96, 1), (33, 1)], ids=["f16_tiny", "f64_125m", "f96_760m", "f33_odd"])
@pytest.mark.parametrize("ttt_type", ["linear", "mlp"])
def test_kernel_matches_reference(ttt_type, f, B, dtype, tol):
    from xbench_pytorch import model as torch_model
    from xbench_triton import model

    nh, L = 2, 48  # three mini-batches of 16, so the state carries over twice
    size = xs.ModelSize("t", nh * f, 1, nh, f, 4, 8)
    p = {k.rsplit(".", 1)[1]: torch.from_numpy(v) for k, v in perturbed(xs.inner_param_specs(size, ttt_type, 16)).items()}
    gen = torch.Generator().manual_seed(0)
    xq, xk, xv = (0.5 * torch.randn(B, nh, L, f, generator=gen) for _ in range(3))
    gate = torch.rand(B, nh, L, generator=gen)
    want = torch_model.ttt_inner(xq.double(), xk.double(), xv.double(), gate.double(),
                                 {k: v.double() for k, v in p.items()}, ttt_type, 16).numpy()
    got = model.ttt_inner(xq.to(dtype), xk.to(dtype), xv.to(dtype), gate.to(dtype), p, ttt_type, 16)
    assert got.dtype == torch.float32 and got.shape == xq.shape
    assert rel(got.numpy(), want) < tol


@pytest.fixture(scope="module")
def backends():
    from xbench_pytorch import backend as torch_backend
    from xbench_triton import backend

    return backend.Backend(), torch_backend.Backend()


@pytest.mark.parametrize("ttt_type,phase,backbone", [
    ("linear", "forward", "transformer"), ("mlp", "forward", "transformer"), ("linear", "inner_only", "transformer"),
    ("mlp", "inner_only", "transformer"), ("mlp", "forward", "mamba")])
def test_export_matches_pytorch(backends, tmp_path, ttt_type, phase, backbone):
    inner_only = phase == "inner_only"
    cfg = xw.TTT(model_size="tiny", ttt_type=ttt_type, seq_len=64, batch=2, phase=phase, backbone=backbone)
    size = cfg.size
    specs = xs.inner_param_specs(size, ttt_type, 16) if inner_only else xs.param_specs(size, ttt_type, 16, backbone)
    inputs = (xs.random_inner_inputs(2, size, 64, seed=3) if inner_only
              else {"tokens": xs.random_tokens(2, 64, size.vocab, seed=3)})
    wp, ip = str(tmp_path / "w.safetensors"), str(tmp_path / "x.safetensors")
    tensors.write_safetensors(wp, perturbed(specs))
    tensors.write_safetensors(ip, inputs)
    outs = []
    for fw, name in zip(backends, ("triton", "pytorch")):
        op = str(tmp_path / f"{name}.safetensors")
        rep = xr.export(fw, cfg, "", "cpu", wp, ip, op)
        assert rep["status"] == "ok", rep
        outs.append(next(iter(tensors.read_safetensors(op).values())))
    assert outs[0].shape == outs[1].shape
    assert rel(outs[0], outs[1].astype(np.float64)) < 1e-5


def test_cli_json_validates():
    jsonschema = pytest.importorskip("jsonschema")
    with open(os.environ.get("XBENCH_RESULT_SCHEMA") or os.path.join(ROOT, "schema", "result.schema.json")) as f:
        schema = json.load(f)
    r = subprocess.run([sys.executable, ENTRY, "--model-size", "tiny", "--ttt-type", "mlp", "--inner-only",
                        "--seq-len", "32", "--device", "cpu", "--warmup", "0", "--repeats", "2", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    jsonschema.validate(rec, schema)
    assert rec["backend"] == "triton" and rec["status"] == "ok" and rec["device"]["kind"] == "cpu"
    assert "interpreter" in rec["env"]["timing"]
    # a CPU timing of the interpreter says so where tables show it (one
    # process for both checks: each start imports torch and triton)
    assert any("Triton interpreter" in w for w in rec["warnings"]), rec["warnings"]


@pytest.mark.parametrize("change,word", [({"dtype": "float64"}, "float64"), ({"dtype": "tf32"}, "tf32"),
                                         ({"mini_batch": 8, "seq_len": 32}, "mini-batch")])
def test_unsupported(backends, change, word):
    cfg = xw.TTT(model_size="tiny", ttt_type="linear", warmup=0, repeats=1, **{"seq_len": 32, **change})
    rec = xr.run(backends[0], cfg, "", "cpu")
    assert rec["status"] == "unsupported", rec
    assert word in rec["message"]


def test_gemm_cli_warns_it_is_the_interpreter():
    from xbench_triton import gemm  # noqa: F401  (triton declares gemm: its module must be there)
    jsonschema = pytest.importorskip("jsonschema")
    with open(os.environ.get("XBENCH_RESULT_SCHEMA") or os.path.join(ROOT, "schema", "result.schema.json")) as f:
        schema = json.load(f)
    r = subprocess.run([sys.executable, ENTRY, "--workload", "gemm", "--m", "32", "--n", "32", "--k", "32",
                        "--layout", "nt", "--device", "cpu", "--warmup", "0", "--repeats", "2", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    jsonschema.validate(rec, schema)
    assert rec["backend"] == "triton" and rec["status"] == "ok" and rec["config"]["workload"] == "gemm"
    assert any("Triton interpreter" in w for w in rec["warnings"]), rec["warnings"]
