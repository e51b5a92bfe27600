import json
import struct

import numpy as np
import pytest

from xbench_py.tensors import read_safetensors, write_safetensors


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


def test_bf16_beside_other_dtypes(tmp_path):
    # The library refuses BF16 for numpy; the other tensors of the same file
    # still come through it, the BF16 one is widened from its raw bits.
    vals = np.array([[0.5, -1.0], [65280.0, 2.0**-10]], np.float32)  # exact in bf16
    bits = (vals.view(np.uint32) >> 16).astype("<u2").tobytes()
    f32 = np.arange(3, dtype="<f4").tobytes()
    header = json.dumps({
        "__metadata__": {"k": "v"},
        "w": {"dtype": "F32", "shape": [3], "data_offsets": [0, len(f32)]},
        "x": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [len(f32), len(f32) + len(bits)]},
    }).encode()
    p = tmp_path / "mixed.safetensors"
    p.write_bytes(struct.pack("<Q", len(header)) + header + f32 + bits)
    back = read_safetensors(str(p))
    np.testing.assert_array_equal(back["x"], vals)
    assert back["x"].dtype == np.float32 and back["x"].flags.writeable
    np.testing.assert_array_equal(back["w"], np.arange(3, dtype=np.float32))


def test_views_and_byte_order_written_as_values(tmp_path):
    # The library writes the memory it is given: a transposed view or a
    # big-endian array must still be stored as its values.
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = {"t": base.T, "be": np.array([1.5, -2.0], dtype=">f8"), "step": np.arange(10, dtype=np.int64)[::3]}
    p = tmp_path / "v.safetensors"
    write_safetensors(str(p), t)
    back = read_safetensors(str(p))
    for k, v in t.items():
        np.testing.assert_array_equal(back[k], v)
        assert back[k].dtype.isnative


def test_read_is_a_copy_of_the_file(tmp_path):
    p = tmp_path / "c.safetensors"
    write_safetensors(str(p), {"a": np.zeros(4, np.float32)})
    first = read_safetensors(str(p))
    first["a"][0] = 7.0
    assert read_safetensors(str(p))["a"][0] == 0.0


def test_errors_name_the_file(tmp_path):
    p = tmp_path / "garbage.safetensors"
    p.write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
    with pytest.raises(ValueError, match="garbage.safetensors"):
        read_safetensors(str(p))
    with pytest.raises(ValueError, match=r"x\.st.*'u'.*uint8"):
        write_safetensors(str(tmp_path / "x.st"), {"u": np.zeros(2, np.uint8)})
