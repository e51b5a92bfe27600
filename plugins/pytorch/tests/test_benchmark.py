"""benchmark.py end to end: the CLI's JSON against the harness's schema, and a
serve session (info, run, export, bad requests, shutdown)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from xbench_pytorch import model as m
from xbench_py import workloads as xw
from xbench_py import spec as xs
from xbench_py import tensors

PLUGIN = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(os.path.dirname(PLUGIN))
ENTRY = os.path.join(PLUGIN, "benchmark.py")
SCHEMA = os.environ.get("XBENCH_RESULT_SCHEMA") or os.path.join(ROOT, "schema", "result.schema.json")


@pytest.fixture(scope="module")
def validate():
    jsonschema = pytest.importorskip("jsonschema")
    with open(SCHEMA) as f:
        schema = json.load(f)
    return lambda rec: jsonschema.validate(rec, schema)


def test_cli_json_is_valid(validate):
    r = subprocess.run([sys.executable, ENTRY, "--model-size", "tiny", "--ttt-type", "mlp", "--seq-len", "64", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1
    rec = json.loads(lines[0])
    validate(rec)
    assert rec["status"] == "ok" and rec["backend"] == "pytorch" and len(rec["samples_ms"]) == 10
    assert rec["device"]["kind"] in ("cpu", "cuda", "rocm") and rec["env"]["framework"] == "torch"
    assert rec["num_params"] == xs.count_params(xs.param_specs(xs.model_size("tiny"), "mlp", 16))
    # The harness computes statistics and throughput from the samples.
    assert rec["schema_version"] == 2 and rec["throughput"] == 0 and "stats" not in rec and "tokens_per_s" not in rec
    assert rec["config"]["params"]["seq_len"] == "64" and rec["config"]["phase"] == "forward"


class Session:
    def __init__(self, log):
        # stderr to a file: a pipe nobody reads could fill up and stall the child.
        self.p = subprocess.Popen([sys.executable, ENTRY, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=log, text=True)
        self.next = 0

    def raw(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def call(self, op, request=None):
        self.next += 1
        msg = {"id": self.next, "op": op}
        if request is not None:
            msg["request"] = request
        rep = self.raw(json.dumps(msg))
        assert rep["id"] == self.next
        return rep


def cfg(phase="forward", **params):
    return xw.TTT(**{"model_size": "tiny", "ttt_type": "linear", "seq_len": 32, "phase": phase, "warmup": 0,
                     "repeats": 2, **params}).config().to_json()


def test_serve_round_trip(tmp_path, validate):
    log = open(tmp_path / "stderr.log", "w")
    s = Session(log)
    try:
        info = s.call("info")["info"]
        caps = {w["workload"]: w for w in info["capabilities"]["workloads"]}
        assert info["name"] == "pytorch" and "inner_only" in caps["ttt"]["phases"]
        assert caps["ttt"]["values"]["backbone"] == ["transformer", "mamba"]

        res = s.call("run", {"workload": "ttt", "variant": "", "device": "cpu", "config": cfg("backward")})["result"]
        validate(res)
        assert res["status"] == "ok" and len(res["samples_ms"]) == 2 and res["config"]["phase"] == "backward"

        uns = s.call("run", {"workload": "ttt", "device": "cpu", "config": cfg("backward", seq_len=1, mini_batch=1)})["result"]
        validate(uns)
        assert uns["status"] == "unsupported" and "seq_len >= 2" in uns["message"]

        # forward export against the model run in this process
        size = xs.model_size("tiny")
        w = xs.init_params(xs.param_specs(size, "linear", 16), seed=5)
        w = {k: v + np.float32(0.01) for k, v in w.items()}  # off the initial values
        tokens = xs.random_tokens(2, 32, size.vocab, seed=5)
        tensors.write_safetensors(str(tmp_path / "w.st"), w)
        tensors.write_safetensors(str(tmp_path / "t.st"), {"tokens": tokens})
        req = {"workload": "ttt", "device": "cpu", "config": cfg(batch=2), "weights_path": str(tmp_path / "w.st"),
               "inputs_path": str(tmp_path / "t.st"), "output_path": str(tmp_path / "out.st")}
        exp = s.call("export", req)["export"]
        assert exp["status"] == "ok" and exp["device"]["kind"] == "cpu", exp
        logits = tensors.read_safetensors(str(tmp_path / "out.st"))["logits"]
        assert logits.shape == (2, 32, size.vocab) and logits.dtype == np.float32
        with torch.no_grad():
            want = m.forward({k: torch.from_numpy(v) for k, v in w.items()}, torch.from_numpy(tokens).long(),
                             size, "linear", 16)
        np.testing.assert_allclose(logits, want.numpy(), rtol=1e-5, atol=1e-5)

        # inner-only export in float64 writes F64 "out"
        tensors.write_safetensors(str(tmp_path / "x.st"), xs.random_inner_inputs(1, size, 32, seed=6))
        req.update(config=cfg("inner_only", dtype="float64", ttt_type="mlp"), inputs_path=str(tmp_path / "x.st"))
        w_inner = xs.init_params(xs.inner_param_specs(size, "mlp", 16), seed=6)
        tensors.write_safetensors(str(tmp_path / "w.st"), w_inner)
        assert s.call("export", req)["export"]["status"] == "ok"
        out = tensors.read_safetensors(str(tmp_path / "out.st"))["out"]
        assert out.shape == (1, size.heads, 32, size.head_dim) and out.dtype == np.float64

        # a weights file that lacks a tensor: a failed export that names it
        bad = s.call("export", dict(req, weights_path=str(tmp_path / "t.st")))["export"]
        assert bad["status"] == "failed" and "layers.0.ttt." in bad["message"]

        # broken requests get an error reply and the session goes on
        assert "error" in s.raw("{not json")
        assert "unknown op" in s.call("frobnicate")["error"]
        bad_cfg = cfg()
        bad_cfg["params"]["seq_len"] = 32
        assert "must be strings" in s.call("run", {"device": "cpu", "config": bad_cfg})["error"]
        assert "unknown field" in s.call("run", {"device": "cpu", "config": dict(cfg(), colour="red")})["error"]
        assert s.call("info")["info"]["name"] == "pytorch"

        s.p.stdin.write(json.dumps({"id": 99, "op": "shutdown"}) + "\n")
        s.p.stdin.flush()
        assert s.p.wait(timeout=30) == 0
        assert s.p.stdout.read() == ""  # nothing after the replies
    finally:
        if s.p.poll() is None:
            s.p.kill()
        log.close()


def gemm_cfg(**params):
    return xw.Gemm(**{"m": 16, "n": 8, "k": 32, "warmup": 0, "repeats": 2, **params}).config().to_json()


def test_cli_gemm(validate):
    from xbench_pytorch import gemm  # noqa: F401  (pytorch declares gemm: its module must be there)
    r = subprocess.run([sys.executable, ENTRY, "--workload", "gemm", "--m", "64", "--n", "64", "--k", "64",
                        "--layout", "nn", "--dtype", "float32", "--device", "cpu", "--repeats", "3", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rec = json.loads(r.stdout)
    validate(rec)
    assert rec["status"] == "ok" and rec["num_params"] == 0 and len(rec["samples_ms"]) == 3
    assert rec["config"]["workload"] == "gemm" and rec["config"]["params"]["m"] == "64"


def test_serve_gemm_batch_and_export(tmp_path, validate):
    from xbench_pytorch import gemm  # noqa: F401  (pytorch declares gemm: its module must be there)
    log = open(tmp_path / "stderr.log", "w")
    s = Session(log)
    try:
        caps = {w["workload"]: w for w in s.call("info")["info"]["capabilities"]["workloads"]}
        assert caps["gemm"]["phases"] == ["forward"] and "float32" in caps["gemm"]["values"]["dtype"]
        reqs = [{"workload": "gemm", "device": "cpu", "config": gemm_cfg(layout=lay)} for lay in ("nn", "nt", "tn", "tt")]
        reqs.append({"workload": "gemm", "device": "cpu", "config": gemm_cfg(dtype="float8_e4m3", layout="nt")})
        reqs.append({"workload": "ttt", "variant": "compile", "device": "cpu", "config": cfg(dtype="float64")})
        s.next += 1
        rep = s.raw(json.dumps({"id": s.next, "op": "run_batch", "requests": reqs}))
        assert rep["id"] == s.next
        res = rep["results"]
        for r in res:
            validate(r)
        assert [r["status"] for r in res] == ["ok"] * 4 + ["unsupported"] * 2, [r.get("message") for r in res]
        assert [r["config"]["params"]["layout"] for r in res[:4]] == ["nn", "nt", "tn", "tt"]
        assert "float8_e4m3" in res[4]["message"] and "float64" in res[5]["message"]

        rng = np.random.default_rng(0)
        a = rng.standard_normal((2, 32, 16), dtype=np.float32)  # tn: A stored [batch, k, m]
        b = rng.standard_normal((2, 8, 32), dtype=np.float32)  # B stored [batch, n, k]
        tensors.write_safetensors(str(tmp_path / "ab.st"), {"a": a, "b": b})
        req = {"workload": "gemm", "device": "cpu", "config": gemm_cfg(layout="tt", batch=2), "weights_path": "",
               "inputs_path": str(tmp_path / "ab.st"), "output_path": str(tmp_path / "c.st")}
        exp = s.call("export", req)["export"]
        assert exp["status"] == "ok", exp
        c = tensors.read_safetensors(str(tmp_path / "c.st"))["c"]
        assert c.shape == (2, 16, 8) and c.dtype == np.float32
        np.testing.assert_allclose(c, np.swapaxes(a, 1, 2) @ np.swapaxes(b, 1, 2), rtol=1e-4, atol=1e-4)
        bad = s.call("export", dict(req, config=gemm_cfg(layout="nn", batch=2)))["export"]
        assert bad["status"] == "failed" and "'a'" in bad["message"]
    finally:
        s.p.kill()
        log.close()
