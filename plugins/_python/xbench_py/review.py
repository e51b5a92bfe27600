"""xbench_py.review: a static reading of a candidate file for the patterns
KernelBench's checker looks for (docs/workloads/problem.md, "Static
review"). It refuses nothing: its findings go into the result's warnings
(and into a refusal's message), for a reader to look at. The gate and the
clock checks are what refuse.

Each finding is "<class> (line N: <what>)"; one line per class.
"""

from __future__ import annotations

import ast
import re

THREADS = "threads"
STREAMS = "streams"
TIMERS = "timer names"
SWALLOW = "try/except that swallows errors"
PRECISION = "precision downgrade"
REFERENCE = "calls into the reference Model"
SUBCLASS = "tensor subclass"
PATCH = "replaces a library attribute"

_THREAD_NAMES = {"threading", "Thread", "ThreadPoolExecutor", "ProcessPoolExecutor", "multiprocessing",
                 "_thread", "start_new_thread", "concurrent"}
_TIMER_NAMES = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time_ns", "process_time",
                "Event", "elapsed_time", "synchronize", "record"}
_PRECISION_NAMES = {"half", "float16", "bfloat16", "allow_tf32", "set_float32_matmul_precision", "autocast",
                    "allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"}
_SUBCLASS_NAMES = {"__torch_function__", "__torch_dispatch__", "_make_subclass", "_make_wrapper_subclass"}
_STREAM_NAMES = {"Stream", "stream", "current_stream", "ExternalStream"}
# In source strings (CUDA C++ for load_inline, Triton is Python): the same
# classes spelt the way a kernel source spells them.
_TEXT = ((STREAMS, re.compile(r"cudaStream(Create|_t)|getStreamFromPool|cudaStreamNonBlocking")),
         (THREADS, re.compile(r"std::thread|pthread_create|std::async")),
         (PRECISION, re.compile(r"\b__half\b|__nv_bfloat16|__float2half|\bhalf2?\b")))
# A string is read as kernel source only when it looks like one (a docstring
# that says "half" is not a downgrade).
_KERNEL_SOURCE = re.compile(r"__global__|#include|torch::|extern \"C\"")


def _name(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _dotted(node) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _swallows(handler: ast.ExceptHandler) -> bool:
    """A handler that catches everything (bare, Exception, BaseException)
    and does not raise again."""
    caught = _dotted(handler.type) if handler.type is not None else ""
    if caught not in ("", "Exception", "BaseException", "RuntimeError"):
        return False
    return not any(isinstance(n, ast.Raise) for n in ast.walk(handler))


def review_source(text: str) -> list:
    """The findings of one candidate source, one line per class, in a fixed
    order; a file that does not parse is one finding."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        return [f"does not parse (line {e.lineno}: {e.msg})"]
    found: dict = {}

    def add(cls: str, node, what: str) -> None:
        found.setdefault(cls, [])
        line = getattr(node, "lineno", 0)
        if len(found[cls]) < 3 and all(ln != line for ln, _ in found[cls]):
            found[cls].append((line, what))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = ([node.module] if isinstance(node, ast.ImportFrom) and node.module else []) + [a.name for a in node.names]
            for m in mods:
                if m.split(".")[0] in _THREAD_NAMES:
                    add(THREADS, node, f"import {m}")
        elif isinstance(node, ast.Attribute) or isinstance(node, ast.Name):
            n = _name(node)
            dotted = _dotted(node)
            if n in _THREAD_NAMES:
                add(THREADS, node, dotted)
            if n in _TIMER_NAMES and (dotted.startswith(("time.", "torch.cuda", "cuda.")) or n == "elapsed_time"):
                add(TIMERS, node, dotted)
            if n in _PRECISION_NAMES:
                add(PRECISION, node, dotted)
            if n in _STREAM_NAMES and ("cuda" in dotted or n != "stream"):
                add(STREAMS, node, dotted)
            if n == "Model" and isinstance(node, ast.Name):
                add(REFERENCE, node, "Model")
        if isinstance(node, (ast.FunctionDef, ast.Attribute)) and (getattr(node, "name", "") in _SUBCLASS_NAMES
                                                                  or _name(node) in _SUBCLASS_NAMES):
            add(SUBCLASS, node, getattr(node, "name", "") or _dotted(node))
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Attribute) and _dotted(t).split(".")[0] in ("torch", "time", "triton", "sys"):
                    add(PATCH, node, f"{_dotted(t)} = ...")
        elif isinstance(node, ast.Call) and _dotted(node.func) == "setattr":
            add(PATCH, node, "setattr(...)")
        if isinstance(node, ast.ExceptHandler) and _swallows(node):
            add(SWALLOW, node, f"except {_dotted(node.type) if node.type is not None else ''}".rstrip())
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _KERNEL_SOURCE.search(node.value):
            for cls, rx in _TEXT:
                m = rx.search(node.value)
                if m:
                    add(cls, node, f"{m.group(0)} in a source string")
    order = (PATCH, THREADS, STREAMS, TIMERS, SWALLOW, PRECISION, SUBCLASS, REFERENCE)
    return [f"{cls} ({'; '.join(f'line {ln}: {w}' for ln, w in sorted(found[cls]))})" for cls in order if cls in found]


def review_file(path: str) -> list:
    """review_source of the file at path ([] when it cannot be read: the
    import that follows reports that)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return review_source(f.read())
    except OSError:
        return []
