"""benchmark.py end to end: the CLI's JSON against the harness's schema, and a
serve session (info, run, export, bad requests, shutdown)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import model as m
import xbench_contract as xc

PLUGIN = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(os.path.dirname(PLUGIN))
ENTRY = os.path.join(PLUGIN, "benchmark.py")
SCHEMA = os.path.join(ROOT, "schema", "result.schema.json")


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
    assert rec["num_params"] == xc.count_params(xc.param_specs(xc.model_size("tiny"), "mlp", 16))
    assert rec["tokens_per_s"] == pytest.approx(64 / (rec["stats"]["median_ms"] / 1000))


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


def cfg(**kw):
    c = dict(workload="ttt", model_size="tiny", ttt_type="linear", backward=False, inner_only=False, batch=1,
             seq_len=32, mini_batch=16, dtype="float32", backbone="transformer", warmup=0, repeats=2)
    c.update(kw)
    return c


def test_serve_round_trip(tmp_path, validate):
    log = open(tmp_path / "stderr.log", "w")
    s = Session(log)
    try:
        info = s.call("info")["info"]
        assert info["name"] == "pytorch" and "inner_only" in info["capabilities"]["phases"]

        res = s.call("run", {"workload": "ttt", "variant": "", "device": "cpu", "config": cfg(backward=True)})["result"]
        validate(res)
        assert res["status"] == "ok" and len(res["samples_ms"]) == 2 and res["config"]["backward"]

        uns = s.call("run", {"workload": "ttt", "device": "cpu", "config": cfg(backbone="mamba")})["result"]
        validate(uns)
        assert uns["status"] == "unsupported" and "mamba" in uns["message"]

        # forward export against the model run in this process
        size = xc.model_size("tiny")
        w = xc.init_params(xc.param_specs(size, "linear", 16), seed=5)
        w = {k: v + np.float32(0.01) for k, v in w.items()}  # off the initial values
        tokens = xc.random_tokens(2, 32, size.vocab, seed=5)
        xc.write_safetensors(str(tmp_path / "w.st"), w)
        xc.write_safetensors(str(tmp_path / "t.st"), {"tokens": tokens})
        req = {"workload": "ttt", "device": "cpu", "config": cfg(batch=2), "weights_path": str(tmp_path / "w.st"),
               "inputs_path": str(tmp_path / "t.st"), "output_path": str(tmp_path / "out.st")}
        exp = s.call("export", req)["export"]
        assert exp["status"] == "ok" and exp["device"]["kind"] == "cpu", exp
        logits = xc.read_safetensors(str(tmp_path / "out.st"))["logits"]
        assert logits.shape == (2, 32, size.vocab) and logits.dtype == np.float32
        with torch.no_grad():
            want = m.forward({k: torch.from_numpy(v) for k, v in w.items()}, torch.from_numpy(tokens).long(),
                             size, "linear", 16)
        np.testing.assert_allclose(logits, want.numpy(), rtol=1e-5, atol=1e-5)

        # inner-only export in float64 writes F64 "out"
        xc.write_safetensors(str(tmp_path / "x.st"), xc.random_inner_inputs(1, size, 32, seed=6))
        req.update(config=cfg(inner_only=True, dtype="float64", ttt_type="mlp"), inputs_path=str(tmp_path / "x.st"))
        w_inner = xc.init_params(xc.inner_param_specs(size, "mlp", 16), seed=6)
        xc.write_safetensors(str(tmp_path / "w.st"), w_inner)
        assert s.call("export", req)["export"]["status"] == "ok"
        out = xc.read_safetensors(str(tmp_path / "out.st"))["out"]
        assert out.shape == (1, size.heads, 32, size.head_dim) and out.dtype == np.float64

        # a weights file that lacks a tensor: a failed export that names it
        bad = s.call("export", dict(req, weights_path=str(tmp_path / "t.st")))["export"]
        assert bad["status"] == "failed" and "layers.0.ttt." in bad["message"]

        # broken requests get an error reply and the session goes on
        assert "error" in s.raw("{not json")
        assert "unknown op" in s.call("frobnicate")["error"]
        assert "seq_len" in s.call("run", {"device": "cpu", "config": cfg(seq_len=30)})["error"]
        assert "unknown field" in s.call("run", {"device": "cpu", "config": cfg(colour="red")})["error"]
        assert s.call("info")["info"]["name"] == "pytorch"

        s.p.stdin.write(json.dumps({"id": 99, "op": "shutdown"}) + "\n")
        s.p.stdin.flush()
        assert s.p.wait(timeout=30) == 0
        assert s.p.stdout.read() == ""  # nothing after the replies
    finally:
        if s.p.poll() is None:
            s.p.kill()
        log.close()
