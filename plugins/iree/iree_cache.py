"""Compile once per shape, reuse across runs and machines.

A compiled module (.vmfb) is stored under <XBENCH_COMPILE_CACHE>/iree/ (the
harness's --compile-cache folder) at the sha256 of: the IREE version, the
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
import os
import time

import iree_targets


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
        import xbench_contract as xc

        parts["cpu"] = xc.cpu_name()
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


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
    k = key(target, mlir)
    path = os.path.join(d, k + ".vmfb") if d else ""
    t0 = time.perf_counter()
    if path and os.path.exists(path):
        with open(path, "rb") as f:
            data = f.read()
        return data, {"how": "cache", "ms": (time.perf_counter() - t0) * 1e3, "path": path}
    if not have_compiler():
        where = f"compile cache {d}" if d else "no compile cache (--compile-cache not given)"
        raise Missing(f"iree: module {label} for target {target.name} (key {k}) is not in the {where}, and the IREE "
                      f"compiler (python module iree.compiler, package iree-base-compiler) is not installed here "
                      f"to compile it; compile it beforehand with scripts/iree-precompile.sh into that folder")
    data = compile_now(target, mlir)
    ms = (time.perf_counter() - t0) * 1e3
    if path:
        os.makedirs(d, exist_ok=True)
        _write(path, data)
        meta = {"label": label, "target": target.name, "flags": list(target.flags), "iree": version(),
                "compile_ms": round(ms, 1), "bytes": len(data)}
        _write(path[:-5] + ".json", json.dumps(meta, indent=1).encode())
    return data, {"how": "compiled", "ms": ms, "path": path}
