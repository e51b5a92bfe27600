import json
import struct

import numpy as np
import pytest

from xbench_safetensors import read_safetensors, write_safetensors


def test_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    t = {
        "a.f32": rng.standard_normal((3, 4)).astype(np.float32),
        "b.f64": rng.standard_normal((2, 2, 2)),
        "c.f16": rng.standard_normal(5).astype(np.float16),
        "d.i32": np.arange(6, dtype=np.int32).reshape(2, 3),
        "e.i64": np.array([-(2**40), 7], dtype=np.int64),
        "scalar": np.array(1.5, dtype=np.float32),
        "empty": np.zeros((0, 3), np.float32),
    }
    p = tmp_path / "t.safetensors"
    write_safetensors(str(p), t, metadata={"format": "pt"})
    raw = p.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0 and json.loads(raw[8:8 + n])["__metadata__"] == {"format": "pt"}
    back = read_safetensors(str(p))
    assert set(back) == set(t)
    for k, v in t.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape
        np.testing.assert_array_equal(back[k], v)
        assert back[k].flags.writeable


def test_bf16_read(tmp_path):
    vals = np.array([1.0, -2.5, 3.140625], np.float32)  # exactly representable in bf16
    bits = (vals.view(np.uint32) >> 16).astype("<u2").tobytes()
    header = json.dumps({"x": {"dtype": "BF16", "shape": [3], "data_offsets": [0, len(bits)]}}).encode()
    p = tmp_path / "bf16.safetensors"
    p.write_bytes(struct.pack("<Q", len(header)) + header + bits)
    np.testing.assert_array_equal(read_safetensors(str(p))["x"], vals)


def test_bad_dtype_rejected(tmp_path):
    with pytest.raises(ValueError, match="dtype"):
        write_safetensors(str(tmp_path / "x"), {"u": np.zeros(2, np.uint8)})
