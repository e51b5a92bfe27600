"""Safetensors files as numpy arrays, through the `safetensors` package.

`safetensors.numpy` does the format (header, offsets, alignment, byte
order); this module keeps the two functions the backends call and the
project's rules around it:

- Read: every dtype numpy has (F32, F64, F16, I32, I64, ...) comes back as
  the library loads it, made writable and independent of the file. BF16 has
  no numpy dtype and the library refuses it, so those tensors alone are read
  as raw bits from the data offsets the header names and widened exactly to
  float32 (a bfloat16 is the top half of a float32).
- Write: only F32, F64, F16, I32 and I64, the dtypes the harness's Go reader
  (harness/tensorfile) takes; arrays are made contiguous first, because the
  library writes the memory it is given, so a transposed view would be
  stored in the wrong order.
"""

from __future__ import annotations

import json
import struct

import numpy as np
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

_WRITABLE = {np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int32, np.int64)}


def _bf16_as_float32(path: str, names: list[str]) -> dict[str, np.ndarray]:
    # The library has already checked the header (safe_open succeeded), so
    # this only looks up where each BF16 tensor's bytes are.
    out = {}
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        for name in names:
            meta = header[name]
            begin, end = meta["data_offsets"]
            f.seek(8 + n + begin)
            raw = f.read(end - begin)
            shape = [int(s) for s in meta["shape"]]
            count = int(np.prod(shape, dtype=np.int64))
            if len(raw) != 2 * count:
                raise ValueError(f"{path}: tensor {name!r}: {len(raw)} bytes of BF16, shape {shape} needs {2 * count}")
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            out[name] = bits.view(np.float32).reshape(shape)
    return out


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """All tensors of a file, as writable numpy arrays in native byte order
    (BF16 widened to float32)."""
    out: dict[str, np.ndarray] = {}
    bf16: list[str] = []
    try:
        with safe_open(path, framework="np") as f:
            for name in f.keys():
                if f.get_slice(name).get_dtype() == "BF16":
                    bf16.append(name)
                    continue
                # A copy: the library's arrays may be views of a mapping of
                # the file, and callers keep and modify what they read.
                out[name] = np.array(f.get_tensor(name), copy=True)
    except (SafetensorError, TypeError) as e:
        raise ValueError(f"read safetensors {path}: {e}") from e
    if bf16:
        out.update(_bf16_as_float32(path, bf16))
    return out


def write_safetensors(path: str, tensors: dict[str, np.ndarray], metadata: dict[str, str] | None = None) -> None:
    """Write arrays (float32/64/16, int32/64), little-endian, with optional
    string metadata."""
    arrays = {}
    for name in sorted(tensors):
        arr = np.asarray(tensors[name])
        if arr.dtype.newbyteorder("=") not in _WRITABLE:
            raise ValueError(f"write safetensors {path}: tensor {name!r} has numpy dtype {arr.dtype}; "
                             "supported: float32, float64, float16, int32, int64")
        # order="C", not ascontiguousarray: that one turns a scalar into shape (1,).
        arrays[name] = np.asarray(arr, order="C")
    meta = {str(k): str(v) for k, v in metadata.items()} if metadata else None
    try:
        save_file(arrays, path, metadata=meta)
    except SafetensorError as e:
        raise ValueError(f"write safetensors {path}: {e}") from e
