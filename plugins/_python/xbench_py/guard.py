"""xbench_py.guard: what code under test must leave as it found it, so that
the clock stays the harness's (docs/workloads/problem.md, "The clock").

The clock references are captured here, at this module's import, which
xbench_py.types makes: the CLI imports it before any backend, and a backend
imports every candidate or problem file later, so no code under test has
run yet. The
timers time with these references (perf_counter below), not with
`time.perf_counter` looked up at the call, so a candidate that replaces
time.perf_counter cannot shorten its own samples.

Every other object a timer goes through (torch.cuda.Event and its methods,
torch.cuda.synchronize, CUPTI's functions, the timers' own methods) is
registered with protect() by the module that uses it, at its import. After
each call of code under test the runner asks tampered(): anything replaced
refuses the cell, naming what was replaced, and restore() puts the
originals back so that the next request (in the same process) is timed as
if the tampering never happened.

Threads: a call whose work goes on in a thread after it returns is timed
short. threads_since(before) names the threads alive now that were not
alive before the code under test was imported.
"""

from __future__ import annotations

import sys
import threading
import time

# The harness's clock. Timers call these, never time.perf_counter.
perf_counter = time.perf_counter
perf_counter_ns = time.perf_counter_ns
monotonic = time.monotonic

_MISSING = object()
# (label, owner, attribute, original, kind): what tampered() compares; kind
# ("clock" or "gate") names the refusal's class.
_protected: list = []


class Tampered(Exception):
    """Raised by check(): the message names what was replaced; the runner
    records it as a failed result with this message as it is."""


def _static(owner, attr):
    # The raw attribute (a function, a descriptor) as inspect.getattr_static
    # finds it: the same object at every lookup, where getattr of a method
    # makes a new one. Written out (an instance's or module's own dict, then
    # the class dicts along the MRO) because this runs after every call and
    # getattr_static is far slower.
    if not isinstance(owner, type):
        own = getattr(owner, "__dict__", None)
        if isinstance(own, dict) and attr in own:
            return own[attr]
        owner = type(owner)
    for k in owner.__mro__:
        if attr in k.__dict__:
            return k.__dict__[attr]
    return _MISSING


def protect(label: str, owner, attr: str, kind: str = "clock") -> None:
    """Record owner.attr as it is now; tampered() names label when it changes.
    Registering the same (owner, attr) twice keeps the first original."""
    if any(e[1] is owner and e[2] == attr for e in _protected):
        return
    _protected.append((label, owner, attr, _static(owner, attr), kind))


def protect_all(prefix: str, owner, attrs, kind: str = "clock") -> None:
    for a in attrs:
        protect(f"{prefix}.{a}", owner, a, kind)


def protect_namespace(prefix: str, owner, kind: str = "gate", skip: frozenset = frozenset()) -> int:
    """Protect every callable attribute owner has now (a module's functions
    and classes; a class's methods along its MRO), so that code under test
    replacing any of them (torch.matmul, which a reference Model calls, made
    to return zeros) refuses the cell, whatever the attribute's name.
    Attributes added later (a lazily imported submodule) are not affected,
    nor the names in skip. Returns how many were registered."""
    if isinstance(owner, type):
        names = {n for k in owner.__mro__ if k is not object for n in vars(k)}
    else:
        names = set(vars(owner))
    n = 0
    for name in sorted(names):
        if name in skip:
            continue
        if name.startswith("__") and name not in ("__matmul__", "__rmatmul__", "__add__", "__mul__", "__sub__",
                                                   "__truediv__", "__getitem__", "__call__"):
            continue  # dunders are Python's machinery, rebound legitimately (__dict__, __doc__)
        value = _static(owner, name)
        if value is _MISSING or not (callable(value) or isinstance(value, (staticmethod, classmethod, property))):
            continue
        protect(f"{prefix}.{name}", owner, name, kind)
        n += 1
    return n


def tampered() -> list:
    """The labels of every protected attribute that is no longer the
    original (replaced, wrapped or deleted), in registration order."""
    return [label for label, owner, attr, orig, _ in _protected if _static(owner, attr) is not orig]


def restore() -> list:
    """Put every replaced attribute back; returns the labels of those that
    could not be restored (still not the original after setattr)."""
    for label, owner, attr, orig, _ in _protected:
        if _static(owner, attr) is orig:
            continue
        try:
            if orig is _MISSING:
                delattr(owner, attr)
            else:
                setattr(owner, attr, orig)
        except (AttributeError, TypeError):
            pass  # reported below
    return tampered()


def check(what: str) -> None:
    """Raise Tampered naming what code under test replaced, after restoring
    it (so the refusal of one cell is the whole effect on the process)."""
    names = tampered()
    if not names:
        return
    kinds = {e[0]: e[4] for e in _protected}
    kind = "clock" if any(kinds[n] == "clock" for n in names) else "gate"
    left = restore()
    tail = f"; could not restore {', '.join(left)}" if left else "; restored"
    raise Tampered(f"patched {kind}: {', '.join(names)} replaced {what} (the harness times and checks with "
                   f"the originals){tail}")


def threads() -> frozenset:
    """The threads alive now (objects, not names: names can repeat)."""
    return frozenset(threading.enumerate())


def threads_since(before: frozenset) -> list:
    """The names of threads alive now that were not in before. A thread
    threading did not start (a _DummyThread: a native thread, such as
    CUPTI's buffer callbacks, that ran Python and asked for its own thread
    object) is left out: it says it is alive as long as the process is."""
    return sorted(t.name for t in threading.enumerate()
                  if t not in before and t.is_alive() and not isinstance(t, threading._DummyThread))


# The clock this module gives out, and the standard library's clocks code
# might patch to confuse a reader of time.* (the timers use only the
# references above, but a replaced time.* says what the code tried).
protect_all("time", time, ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns",
                           "process_time", "process_time_ns", "sleep"))
protect_all("xbench_py.guard", sys.modules[__name__], ("perf_counter", "perf_counter_ns", "monotonic",
                                                       "tampered", "restore", "check", "threads", "threads_since"))
# What threads_since reads: a candidate hiding its thread from it refuses its cell as a clock patch does.
protect_all("threading", threading, ("enumerate", "Thread", "active_count", "current_thread"), kind="gate")
protect_all("threading.Thread", threading.Thread, ("is_alive", "name"), kind="gate")
