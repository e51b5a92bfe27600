"""torch.profiler glue through the contract on the CPU: aten ops as host
time, summed over the calls, and a Chrome trace."""
import json

from xbench_pytorch import backend
from xbench_py import workloads as xw
from xbench_py import profile as xprofile


def test_profile_on_cpu(tmp_path):
    fw = backend.Backend()
    fw.name = "pytorch"
    cfg = xw.TTT(model_size="tiny", ttt_type="linear", batch=1, seq_len=32, mini_batch=16, dtype="float32",
                 backbone="transformer", phase="forward", warmup=1, repeats=1).config()
    path = str(tmp_path / "pytorch.json")
    rep = xprofile.profile(fw, cfg, "", "cpu", 2, path)
    assert rep["status"] == "ok", rep.get("message")
    assert rep["time_kind"] == "host" and rep["profiler"].startswith("torch.profiler (CPU ops)")
    mm = [k for k in rep["kernels"] if k["name"] == "aten::mm"]
    assert mm and mm[0]["count"] % 2 == 0 and mm[0]["self_ms"] > 0
    assert sum(k["self_ms"] for k in rep["kernels"]) <= rep["wall_ms"] * 1.05
    assert json.load(open(path))["traceEvents"]
