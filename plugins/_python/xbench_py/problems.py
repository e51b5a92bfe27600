"""Problem sets in KernelBench's format, for every Python backend of the
problem workload (docs/workloads/problem.md). Torch-free: it finds and
imports files; building models and inputs is the framework's.

A set is a folder of level<N>/ folders; a problem is a file <id>_<name>.py
defining class Model, get_inputs() and get_init_inputs(). A candidate is a
file of the same name under <candidates>/level<N>/ defining class ModelNew.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys

_NAME = re.compile(r"^([1-9][0-9]*)_.*\.py$")


def level_dir(problems: str, level: int) -> str:
    return os.path.join(problems, f"level{level}")


def find(problems: str, level: int, pid: int) -> str:
    """The path of problem pid of a level; FileNotFoundError naming the folder
    when it has no such file, ValueError when two files share the id."""
    d = level_dir(problems, level)
    try:
        names = sorted(os.listdir(d))
    except OSError as e:
        raise FileNotFoundError(f"problem {pid} of level {level}: cannot list {d}: {e.strerror}") from None
    hits = [n for n in names if (m := _NAME.match(n)) and int(m.group(1)) == pid]
    if not hits:
        raise FileNotFoundError(f"problem {pid} of level {level}: no file {pid}_*.py in {d}")
    if len(hits) > 1:
        raise ValueError(f"problem {pid} of level {level}: {', '.join(hits)} share the id in {d}")
    return os.path.join(d, hits[0])


def candidate(candidates: str, level: int, name: str) -> str | None:
    """The candidate file matched to a problem by file name, or None."""
    path = os.path.join(level_dir(candidates, level), name)
    return path if os.path.isfile(path) else None


def import_file(path: str, role: str):
    """Import a problem or candidate file as a fresh module of its own (two
    files may both define Model; neither replaces the other). An error in the
    file propagates: the caller's result says it failed."""
    digest = hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:12]
    name = f"xbench_{role}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses and pickling look a module up by name
    # No __pycache__ written into the user's folder (a KernelBench checkout):
    # the files are small, and the folder is theirs, not xbench's.
    was = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        sys.dont_write_bytecode = was
    return mod


def require(mod, path: str, names: tuple) -> None:
    """AttributeError naming what a problem or candidate file lacks."""
    missing = [n for n in names if not hasattr(mod, n)]
    if missing:
        raise AttributeError(f"{path} defines no {', '.join(missing)} (a problem needs Model, get_inputs, "
                             f"get_init_inputs; a candidate ModelNew)")
