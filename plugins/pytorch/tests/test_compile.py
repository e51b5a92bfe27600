"""The pytorch/compile variant: declared in Info, its exports equal the eager
backend's (the compiled step is the same math), and its record is its own row.
On cpu torch.compile builds C++ kernels, so this needs a C++ compiler."""

import shutil

import numpy as np
import pytest

from xbench_py import workloads as xw
from xbench_py import spec as xs
from xbench_py import runner as xr
from xbench_py import tensors

pytestmark = pytest.mark.skipif(shutil.which("g++") is None and shutil.which("c++") is None,
                                reason="torch.compile on cpu needs a C++ compiler")


perturbed = xs.perturbed_params


@pytest.fixture(scope="module")
def fw():
    from xbench_pytorch import backend

    b = backend.Backend()
    b.name = "pytorch"  # main() fills it from plugin.json
    return b


def test_info_declares_compile(fw):
    variants = {v["name"]: v for v in fw.info()["variants"]}
    assert "compile" in variants
    ttt = variants["compile"]["capabilities"]["workloads"]
    assert [w["workload"] for w in ttt] == ["ttt", "problem", "attention", "scan"] and "forward" in ttt[0]["phases"]
    # The problem workload's further compile mode is a variant of its own.
    assert [w["workload"] for w in variants["compile-max-autotune"]["capabilities"]["workloads"]] == ["problem"]
    # attention's kernel variants declare attention only; efficient has no cpu kernel.
    for name in ("sdpa-flash", "sdpa-efficient", "sdpa-cudnn", "sdpa-math", "naive"):
        assert [w["workload"] for w in variants[name]["capabilities"]["workloads"]] == ["attention"]
    assert variants["sdpa-efficient"]["capabilities"]["workloads"][0]["devices"] == ["cuda", "rocm"]
    assert variants["sdpa-cudnn"]["capabilities"]["workloads"][0]["devices"] == ["cuda"]


# mamba reuses linear's compiled step (same shapes): only its dense layers differ.
@pytest.mark.parametrize("ttt_type,backbone", [("linear", "transformer"), ("mlp", "transformer"), ("linear", "mamba")])
def test_export_matches_eager(fw, tmp_path, ttt_type, backbone):
    cfg = xw.TTT(model_size="tiny", ttt_type=ttt_type, seq_len=64, batch=2, backbone=backbone)
    wp, ip = str(tmp_path / "w.safetensors"), str(tmp_path / "x.safetensors")
    tensors.write_safetensors(wp, perturbed(xs.param_specs(cfg.size, ttt_type, 16, backbone)))
    tensors.write_safetensors(ip, {"tokens": xs.random_tokens(2, 64, cfg.size.vocab, seed=3)})
    outs = []
    for variant in ("compile", ""):
        op = str(tmp_path / f"{variant or 'eager'}.safetensors")
        rep = xr.export(fw, cfg, variant, "cpu", wp, ip, op)
        assert rep["status"] == "ok", rep
        outs.append(tensors.read_safetensors(op)["logits"].astype(np.float64))
    assert np.linalg.norm(outs[0] - outs[1]) / np.linalg.norm(outs[1]) < 1e-5


def test_run_is_its_own_row(fw):
    # Same shapes as the export above for linear: the compiled step is reused.
    cfg = xw.TTT(model_size="tiny", ttt_type="linear", seq_len=64, batch=2, phase="inner_only", warmup=0, repeats=2)
    rec = xr.run(fw, cfg, "compile", "cpu")
    assert rec["status"] == "ok", rec
    assert rec["backend"] == "pytorch/compile" and len(rec["samples_ms"]) == 2


def test_float64_is_unsupported(fw):
    rec = xr.run(fw, xw.TTT(model_size="tiny", ttt_type="linear", seq_len=32, dtype="float64"), "compile", "cpu")
    assert rec["status"] == "unsupported" and "float64" in rec["message"]
