"""Compile once per shape, reuse across runs and machines.

A compiled module is stored xz-compressed (<key>.vmfb.xz: a CUDA module is
mostly PTX text, and shrinks about 6x, which matters for a folder that has
to travel) under <XBENCH_COMPILE_CACHE>/iree/ (the harness's --compile-cache
folder) at a sha256 of: the IREE version, the
target's name and flags, the text compiled (the MLIR wrapped for the target)
and, for the host-CPU target, the CPU's model. A sidecar .json keeps what
made it (flags, version, how long it took), so a cache folder explains itself.

Why a cache that can stand alone: the GPU machine has IREE's runtime but not
its compiler (the compiler wheel is too big to carry there), so modules are
compiled beforehand (iree_precompile.py) into a folder that travels, and the
backend there only loads them. get() then answers how the module came:
"compiled" (iree.compiler here, timed) or "cache" (read from the folder,
timed) -- the backend puts that in the result's warnings, since compile_ms
means something different in each case. Without the compiler and without the
module it raises Missing, naming the module, the key and the folder.

The IREE version is the runtime's when the compiler is absent: the two
packages are released together under one version and revision (pinned
alike in requirements.txt), and a module must match the runtime anyway.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import time

from xbench_iree import targets as iree_targets


class Missing(Exception):
    """No module in the cache and no compiler to make one."""


def have_compiler() -> bool:
    try:
        import iree.compiler  # noqa: F401
    except ImportError:
        return False
    return True


def version() -> str:
    if have_compiler():
        import iree.compiler.version as v
    else:
        import iree.runtime.version as v
    return f"{v.VERSION} ({v.REVISIONS.get('IREE', '?')[:12]})"


def folder() -> str:
    """<--compile-cache>/iree, or "" when the run has no compile cache."""
    base = os.environ.get("XBENCH_COMPILE_CACHE", "")
    return os.path.join(base, "iree") if base else ""


def key(target: iree_targets.Target, mlir: str) -> str:
    parts = {"iree": version(), "target": target.name, "flags": list(target.flags), "source": target.source(mlir)}
    if target.name == "cpu":
        from xbench_py import types as xt

        parts["cpu"] = xt.cpu_name()
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def path(target: iree_targets.Target, mlir: str, cache_dir: str | None = None) -> str:
    """Where the module of (target, mlir) is or would be stored ("" without a cache)."""
    d = folder() if cache_dir is None else cache_dir
    return os.path.join(d, key(target, mlir) + ".vmfb.xz") if d else ""


def obtainable(target: iree_targets.Target, mlir: str) -> bool:
    """Whether get() can return the module: it is cached, or can be compiled."""
    p = path(target, mlir)
    return have_compiler() or bool(p and os.path.exists(p))


def missing_message(target: iree_targets.Target, mlir: str, label: str, cache_dir: str | None = None) -> str:
    d = folder() if cache_dir is None else cache_dir
    where = f"compile cache {d}" if d else "no compile cache (--compile-cache not given)"
    return (f"iree: module {label} for target {target.name} (key {key(target, mlir)}) is not in the {where}, and the "
            f"IREE compiler (python module iree.compiler, package iree-base-compiler) is not installed here to "
            f"compile it; compile it beforehand into that folder (scripts/iree-precompile.sh)")


def compile_now(target: iree_targets.Target, mlir: str) -> bytes:
    import iree.compiler as ic

    return ic.compile_str(target.source(mlir), extra_args=list(target.flags))


def _write(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # atomic: a concurrent reader sees all of it or nothing


def get(target: iree_targets.Target, mlir: str, label: str, cache_dir: str | None = None) -> tuple[bytes, dict]:
    """The module for (target, mlir) and how it came: {"how": "cache" |
    "compiled", "ms": wall ms of the read or the compile, "path": cache file
    or ""}. label names the configuration in messages."""
    d = folder() if cache_dir is None else cache_dir
    p = path(target, mlir, d)
    t0 = time.perf_counter()
    if p and os.path.exists(p):
        with open(p, "rb") as f:
            data = lzma.decompress(f.read())
        return data, {"how": "cache", "ms": (time.perf_counter() - t0) * 1e3, "path": p}
    if not have_compiler():
        raise Missing(missing_message(target, mlir, label, d))
    data = compile_now(target, mlir)
    ms = (time.perf_counter() - t0) * 1e3
    if p:
        os.makedirs(d, exist_ok=True)
        packed = lzma.compress(data, preset=9)
        _write(p, packed)
        meta = {"label": label, "target": target.name, "flags": list(target.flags), "iree": version(),
                "compile_ms": round(ms, 1), "bytes": len(data), "stored_bytes": len(packed)}
        _write(p[:-len(".vmfb.xz")] + ".json", json.dumps(meta, indent=1).encode())
    return data, {"how": "compiled", "ms": ms, "path": p}
