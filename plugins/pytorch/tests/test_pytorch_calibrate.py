"""xbench calibrate through pytorch, on the CPU at small sizes: every
requested dtype the device has gets a positive rate, tf32 is skipped on a
CPU, and the copy bandwidth is measured."""
from xbench_pytorch import backend
from xbench_pytorch import calibrate
from xbench_py import types as xt


def test_calibrate_cpu(monkeypatch):
    monkeypatch.setattr(calibrate, "CPU_N", 128)
    monkeypatch.setattr(calibrate, "CPU_N_NARROW", 64)
    monkeypatch.setattr(calibrate, "CPU_COPY_BYTES", 1 << 20)
    out = backend.Backend().calibrate(xt.Device("cpu", "test"), ["float32", "tf32", "bfloat16", "float64"])
    assert set(out["matmul_tflops"]) == {"float32", "bfloat16", "float64"}
    assert all(v > 0 for v in out["matmul_tflops"].values())
    assert out["copy_gbps"] > 0 and "float32 n=128" in out["method"]
