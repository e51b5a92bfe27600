"""A small numpy reader/writer for the safetensors format.

Written here instead of depending on the `safetensors` package so that every
Python backend can exchange tensors with the harness with numpy alone.

Format: 8-byte little-endian header length N, N bytes of JSON
({name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}),
then the raw little-endian data; offsets count from the end of the header.

Supported dtypes: F32, F64, F16, I32, I64 (read and write) and BF16 (read
only: numpy has no bfloat16, so BF16 is widened to float32 on reading).
"""

from __future__ import annotations

import json
import struct

import numpy as np

_DTYPES = {
    "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"),
    "F16": np.dtype("<f2"),
    "I32": np.dtype("<i4"),
    "I64": np.dtype("<i8"),
}
_NAMES = {d.newbyteorder("="): name for name, d in _DTYPES.items()}
# Headers larger than this are almost certainly a corrupt or foreign file.
_MAX_HEADER = 100 * 1024 * 1024


def _read_span(f, start: int, size: int) -> bytearray:
    # readinto a bytearray gives numpy a writable buffer without a second copy,
    # which matters for multi-GB weight files.
    buf = bytearray(size)
    f.seek(start)
    if f.readinto(buf) != size:
        raise ValueError(f"{f.name}: truncated data at offset {start}")
    return buf


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """All tensors of a file, as numpy arrays in native byte order."""
    out: dict[str, np.ndarray] = {}
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError(f"{path}: too short to be a safetensors file")
        (n,) = struct.unpack("<Q", raw)
        if n > _MAX_HEADER:
            raise ValueError(f"{path}: header length {n} is implausible; not a safetensors file?")
        header = json.loads(f.read(n))
        base = 8 + n
        for name, meta in header.items():
            if name == "__metadata__":
                continue
            dtype, shape = meta["dtype"], [int(s) for s in meta["shape"]]
            begin, end = meta["data_offsets"]
            count = int(np.prod(shape, dtype=np.int64))
            if dtype == "BF16":
                bits = np.frombuffer(_read_span(f, base + begin, end - begin), dtype="<u2")
                if bits.size != count:
                    raise ValueError(f"{path}: tensor {name!r} has {bits.size} values, shape {shape} needs {count}")
                # bfloat16 is the top half of a float32: shift it back into place.
                arr = (bits.astype(np.uint32) << 16).view(np.float32)
            elif dtype in _DTYPES:
                arr = np.frombuffer(_read_span(f, base + begin, end - begin), dtype=_DTYPES[dtype])
                if arr.size != count:
                    raise ValueError(f"{path}: tensor {name!r} has {arr.size} values, shape {shape} needs {count}")
                # A no-op on little-endian hosts (the bytearray is already writable).
                arr = arr.astype(_DTYPES[dtype].newbyteorder("="), copy=False)
            else:
                raise ValueError(f"{path}: tensor {name!r} has dtype {dtype}; supported: BF16, {', '.join(_DTYPES)}")
            out[name] = arr.reshape(shape)
    return out


def write_safetensors(path: str, tensors: dict[str, np.ndarray], metadata: dict[str, str] | None = None) -> None:
    """Write arrays (float32/64/16, int32/64) in name order, little-endian."""
    header: dict = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        arr = np.asarray(tensors[name])
        key = arr.dtype.newbyteorder("=")
        if key not in _NAMES:
            raise ValueError(f"tensor {name!r} has numpy dtype {arr.dtype}; supported: {', '.join(_DTYPES)}")
        data = np.ascontiguousarray(arr, dtype=_DTYPES[_NAMES[key]]).tobytes()
        header[name] = {"dtype": _NAMES[key], "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    # Pad with spaces so the data starts 8-byte aligned, as other writers do.
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)
