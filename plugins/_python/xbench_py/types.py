"""xbench_py.types: the types of the xbench backend protocol (docs/protocol.md,
protocol 2) that every Python backend shares: errors, capabilities, config,
device, timing mode, Prepared, Timer, the Framework base class, the enums
(read from xbench_py.facts) and the out-of-memory classifier. It imports no
other xbench_py module but dtypes (capabilities' dtypes are checked against
its table), facts, guard and modes; the runner (xbench_py.runner),
the serve loop (xbench_py.serve) and the command line (xbench_py.cli) build
on it. Statistics and throughput are the harness's: a result carries raw
samples_ms only.

A backend is a folder plugins/<name>/ with
  plugin.json   {"name", "description", "runtime": "python", "entry": "benchmark.py",
                 "requires": [importable module names], "workloads": [...], "shell": nix dev shell}
  benchmark.py  thin: put plugins/_python on sys.path (once), then
                    xbench_py.cli.main(HERE, load)
                where load() imports the backend package's adapter
                (from xbench_<name>.backend import Backend) and returns an
                instance of its Framework subclass; main calls it only after
                checking `requires`, so a missing package gives one clear line
                (exit 2).
  tests/        the backend's own tests (the conformance suite is shared)
and a package plugins/_python/xbench_<name>/ (imported by that name only, never
by bare module names): the framework file(s) with the models and the timer,
and backend.py with the Framework subclass. A backend built on another
imports it by package (xbench_triton.backend: from xbench_pytorch import
backend).

Workloads. A request names a workload ("ttt", "gemm", "attention", "scan"); its config carries the
workload's params as canonical strings, already validated by the harness. The
contract dispatches by workload name to two methods of the Framework:

  prepare_<workload>(cfg, variant, device, seed) -> Prepared(step, num_params, warnings)
      builds model/operands and inputs once on the device; step() is one
      timed call (the framework's timer waits for the device)
  export_<workload>(cfg, variant, device, weights, inputs) -> {name: numpy array}
      one untimed pass on given tensors (numpy float32, TTT tokens int32; a view
      with cast_inputs (Scan) casts its own: float64 inputs, int64 lengths),
      already checked against the workload's names and shapes (weights is {}
      for gemm); the contract writes the outputs as F32 (F64 for ttt float64)

cfg is the contract's typed view of the params (xbench_py.workloads: TTT with
.size/.backward/.inner_only, Gemm with m/n/k/batch/layout/dtype, Attention
with its shapes, .kvh/.kv (the 0 defaults resolved) and .outputs(); a view's
.to_params() gives the string params back), or the plain Config for a
workload the contract has no view of. Methods are
used rather than handler objects so a backend built on another (triton on
pytorch) inherits and overrides them per workload.

GEMM needs no code in the Framework: set `gemm` to the framework's GEMM module
(DTYPES: {"cpu"|"cuda": dtypes}, prepare(params, device, seed) -> step,
export(params, device, a, b) -> C float32 [batch, m, n]); the base class's
prepare_gemm/export_gemm call it, refusing a dtype that module lacks on the
resolved device (rocm uses the "cuda" entry), and gemm_caps(module, devices)
builds its capability entry. load_module(name) imports such a module by its full name
("xbench_jax.gemm"), or returns None when it is absent (the backend then declares no gemm).

What else the Framework subclass defines (name/description come from plugin.json):
  framework      str, env.framework ("torch", "jax", ...)
  capabilities   Capabilities(WorkloadCaps(...), ...): per workload its phases,
                 devices, "values" (allowed values of enum params; a param not
                 named is allowed at every value) and "max" (bounds of integer
                 params). The contract answers status unsupported, naming the
                 workload, phase, device or value and what is supported, for a
                 request outside them, before prepare is called.
  variants       tuple of Variant(name, description, capabilities); addressed
                 as "<name>/<variant>"; prepare/export get the name
  versions()     {package: version} for env.versions
  resolve_device(requested) -> Device   requested is auto|cpu|cuda|rocm; raise
                 Unsupported when that device is not available here
  timer(device)  -> Timer: .description (env.timing) and .time(fn) -> ms; it
                 must wait for the device (events, sync, block_until_ready).
                 On an NVIDIA GPU the contract wraps it in the device clock
                 (xbench_py.devclock.SpanTimer: the CUPTI span of the call's
                 kernels), which uses it to make and wait for each call;
                 docs/protocol.md, "What one sample is".
  optional: reset_peak_memory(device), peak_memory_bytes(device) -> int,
            release() (called after every request),
            calibrate(device, dtypes) -> {"matmul_tflops": {dtype: TFLOP/s},
              "copy_gbps": GB/s, "method": str}: the device's ceilings for
              `xbench calibrate` (op "calibrate"); skip dtypes the device lacks.
            profile(device, body, trace_path) -> {"profiler": str, "time_kind": "device"|"host",
              "kernels": [{"name", "self_ms", "count"}]}: run body() (it makes the
              profiled calls) under the framework's profiler, write a Chrome trace
              to trace_path, and return each kernel's self time summed over the
              calls; for `xbench profile` (op "profile", xbench_py.profile).
  Raise Unsupported anywhere for a combination it cannot run, Failed for a
  classified failure whose message stands as it is; any other
  exception becomes status failed, or oom when is_oom(exc) (one classifier
  for every backend, the harness's markers: torch's OutOfMemoryError,
  MemoryError, "out of memory", "can't allocate memory", XLA's RESOURCE_EXHAUSTED).

The contract does: JSON type checks only (ConfigError -> exit 2 / error reply;
ranges and defaults are the harness's), capability and variant checks (->
status unsupported), the timing rules (first call -> compile_ms, warmup,
repeats), the result record, export file I/O, and the serve loop (stdout
reserved for replies; ops info, run, run_batch, export, calibrate, profile, shutdown).

Where the rest lives (import each from its module; there is no facade):
  xbench_py.cli.main(plugin_dir, load)   the CLI; --serve runs the JSON-lines loop.
                          Exit: 0 ok, 1 status not ok, 2 bad input/missing package
  xbench_py.runner.run(fw, cfg, variant, device, seed) -> result dict (cfg: a Config or a view)
  xbench_py.runner.export(fw, cfg, variant, device, weights_path, inputs_path, output_path) -> dict
  xbench_py.serve.serve(fw) -> exit code
  xbench_py.workloads   the typed views (TTT, Gemm, Problem, Attention, Scan, VIEWS)
  xbench_py.spec        TTT's sizes, constants, parameter specs, init and inputs
  xbench_py.tensors     read_safetensors / write_safetensors (numpy)
"""

from __future__ import annotations

import gc
import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

from xbench_py import dtypes as _dtypes
from xbench_py import facts as _facts
from xbench_py import guard as _guard
from xbench_py import modes as _modes


# Versions and enums are the Go harness's declarations (xbench_py.facts,
# generated from Go): none is written here.
SCHEMA_VERSION = _facts.SCHEMA_VERSION
# The backend protocol's version (backend.ProtocolVersion in Go), sent in the
# info reply; docs/protocol.md#changes says what each version changed.
PROTOCOL_VERSION = _facts.PROTOCOL_VERSION
PHASES = _facts.PHASES
DEVICES = _facts.DEVICES
TTT_TYPES = _facts.allowed("ttt", "ttt_type")
TTT_DTYPES = _facts.allowed("ttt", "dtype")
BACKBONES = _facts.allowed("ttt", "backbone")
GEMM_DTYPES = _facts.allowed("gemm", "dtype")
GEMM_LAYOUTS = _facts.allowed("gemm", "layout")
ATTENTION_DTYPES = _facts.allowed("attention", "dtype")
ATTENTION_PHASES = _facts.phases("attention")
SCAN_DTYPES = _facts.allowed("scan", "dtype")
SCAN_SEMIRINGS = _facts.allowed("scan", "semiring")
SCAN_PHASES = _facts.phases("scan")
# Every dtype a model or kernel workload names (calibrate's check).
DTYPES = tuple(dict.fromkeys(TTT_DTYPES + GEMM_DTYPES))


class ConfigError(ValueError):
    """A request that is malformed (not merely unsupported): exit 2 on the
    command line, an {"error": ...} reply while serving."""


class Failed(Exception):
    """Raised by a framework for a classified failure whose message is the
    result's message as it is (a candidate that fails its correctness gate:
    "incorrect: max abs err ..."), without the exception type in front."""


class Unsupported(Exception):
    """Raised by a framework for a combination it cannot run: the result gets
    status "unsupported" with this message."""


# The timing mode of a run request (docs/protocol.md, "Timing modes").
_MODE_FIELDS = ("cold_cache", "cuda_graph")


@dataclass(frozen=True)
class Mode:
    cold_cache: bool = False
    cuda_graph: bool = False

    @classmethod
    def from_json(cls, d) -> "Mode":
        """The request's "mode" (absent or None: warm and eager); ConfigError
        naming the field for a non-object, an unknown key or a non-boolean."""
        if d is None:
            return cls()
        if not isinstance(d, dict):
            raise ConfigError(f"request mode must be an object with {', '.join(_MODE_FIELDS)}, got {type(d).__name__}")
        unknown = sorted(set(d) - set(_MODE_FIELDS))
        if unknown:
            raise ConfigError(f"request mode has unknown field(s) {', '.join(unknown)}; fields: {', '.join(_MODE_FIELDS)}")
        for k, v in d.items():
            if not isinstance(v, bool):
                raise ConfigError(f"request mode.{k} must be true or false, got {v!r}")
        return cls(**d)

    def to_json(self) -> dict:
        """Only the fields that are on, as result.Mode omits the rest."""
        return {k: True for k in _MODE_FIELDS if getattr(self, k)}

    def __str__(self) -> str:
        on = [k.replace("_", "-") for k in _MODE_FIELDS if getattr(self, k)]
        return "+".join(on) or "warm"


def _join(values) -> str:
    return ", ".join(str(v) for v in values) or "none"


@dataclass(frozen=True)
class WorkloadCaps:
    """What a backend supports of one workload (backend.WorkloadCaps in Go)."""

    workload: str
    phases: tuple = ("forward",)
    devices: tuple = ("cpu",)
    values: dict = field(default_factory=dict)  # param -> allowed values (enum params)
    max: dict = field(default_factory=dict)  # param -> largest allowed integer

    def __post_init__(self) -> None:
        # Every dtype a backend declares is a name of the one dtype table
        # (xbench_py.dtypes), so a misspelt one fails at import, not as a
        # refusal of every request.
        for name in self.values.get("dtype", ()):
            _dtypes.of(name)

    def to_json(self) -> dict:
        d = {"workload": self.workload, "phases": list(self.phases), "devices": list(self.devices),
             "values": {k: list(v) for k, v in self.values.items()}, "max": {k: int(v) for k, v in self.max.items()}}
        for k in ("values", "max"):  # omitempty in Go
            if not d[k]:
                del d[k]
        return d

    def refusal(self, cfg: "Config", device: str, who: str) -> str | None:
        """Why cfg (on the requested device) is outside these capabilities,
        or None if it is inside. The same rules as Go's Capabilities.Unsupported."""
        if cfg.phase not in self.phases:
            return f"phase {cfg.phase} of workload {self.workload} is not supported by {who} (supported: {_join(self.phases)})"
        if device not in ("auto", "") and device not in self.devices:
            return f"device {device} is not supported by {who} for workload {self.workload} (supported: {_join(self.devices)})"
        for k in sorted(self.values):
            if k in cfg.params and cfg.params[k] not in self.values[k]:
                return (f"{k} {cfg.params[k]} is not supported by {who} for workload {self.workload} "
                        f"(supported: {_join(self.values[k])})")
        for k in sorted(self.max):
            if k in cfg.params:
                try:
                    over = int(cfg.params[k], 10) > self.max[k]
                except ValueError:
                    continue  # not an integer: the view says so
                if over:
                    return (f"{k} {cfg.params[k]} is above what {who} supports for workload {self.workload} "
                            f"(at most {self.max[k]})")
        return None


@dataclass(frozen=True)
class Capabilities:
    workloads: tuple = ()  # of WorkloadCaps

    def __init__(self, *workloads: WorkloadCaps):
        object.__setattr__(self, "workloads", tuple(w for w in workloads if w is not None))

    def of(self, workload: str) -> WorkloadCaps | None:
        return next((w for w in self.workloads if w.workload == workload), None)

    def names(self) -> list:
        return [w.workload for w in self.workloads]

    def to_json(self) -> dict:
        return {"workloads": [w.to_json() for w in self.workloads]}

    def refusal(self, cfg: "Config", device: str, who: str) -> str | None:
        w = self.of(cfg.workload)
        if w is None:
            return f"workload {cfg.workload} is not supported by {who} (supported: {_join(self.names())})"
        return w.refusal(cfg, device, who)


@dataclass(frozen=True)
class Variant:
    name: str
    description: str = ""
    capabilities: Capabilities = Capabilities()

    def to_json(self) -> dict:
        return {"name": self.name, "description": self.description, "capabilities": self.capabilities.to_json()}


@dataclass
class Device:
    kind: str  # cpu | cuda | rocm
    name: str = ""
    driver: str = ""
    count: int = 1

    def to_json(self) -> dict:
        d = {"kind": self.kind, "name": self.name, "driver": self.driver, "count": self.count}
        if not self.driver:
            del d["driver"]  # omitempty in result.Device
        return d


_CONFIG_FIELDS = {"workload": str, "phase": str, "params": dict, "warmup": int, "repeats": int}


@dataclass
class Config:
    """result.Config: the workload, the phase, the workload's params as
    canonical strings (integers in decimal, so nothing is cut to 32 bits),
    warmup and repeats. The harness validated it; from_json checks JSON types
    only. The typed views (TTT, Gemm) read the params."""

    workload: str = "ttt"
    phase: str = "forward"
    params: dict = field(default_factory=dict)
    warmup: int = 3
    repeats: int = 10

    def get(self, key: str, default: str = "") -> str:
        return self.params.get(key, default)

    def to_json(self) -> dict:
        return {"workload": self.workload, "phase": self.phase, "params": dict(self.params),
                "warmup": self.warmup, "repeats": self.repeats}

    @classmethod
    def from_json(cls, d: Any) -> "Config":
        """Parse a protocol config object; ConfigError for a non-object, an
        unknown field, or a field (or param value) of the wrong JSON type."""
        if not isinstance(d, dict):
            raise ConfigError(f"config must be a JSON object, got {type(d).__name__}")
        unknown = sorted(set(d) - set(_CONFIG_FIELDS))
        if unknown:
            raise ConfigError(f"config has unknown field(s) {', '.join(unknown)}; known: {', '.join(_CONFIG_FIELDS)}")
        cfg = cls()
        for k, v in d.items():
            want = _CONFIG_FIELDS[k]
            if type(v) is not want:  # bool is not accepted as int
                raise ConfigError(f"config field {k} = {v!r} must be a JSON "
                                  f"{ {str: 'string', int: 'integer', dict: 'object'}[want]}")
            setattr(cfg, k, dict(v) if want is dict else v)
        bad = sorted(k for k, v in cfg.params.items() if not isinstance(v, str))
        if bad:
            raise ConfigError(f"config params {', '.join(bad)} must be strings (canonical spelling, integers in "
                              f"decimal), got {', '.join(repr(cfg.params[k]) for k in bad)}")
        return cfg


@dataclass
class Prepared:
    """What prepare_<workload> returns: step() runs one timed call and may
    return its outputs (a timer can wait on them); num_params is
    result.num_params (0 for gemm); memory is result.memory_bytes."""

    step: Callable[[], Any]
    num_params: int = 0
    warnings: list = field(default_factory=list)
    # memory: the bytes of the parts of the call a backend can account for,
    # by part ("inputs", "state", "workspace", "outputs"): result.memory_bytes,
    # beside the measured peak_memory_bytes. Counted, not measured: say so in
    # the framework file.
    memory: dict = field(default_factory=dict)
    # settings: the process-wide settings the call ran under that change what
    # is measured (the problem workload's precision flags, read back from the
    # framework), by name: result env.settings, beside the harness's own.
    settings: dict = field(default_factory=dict)
    # compile_ms: host milliseconds of compilation (or of getting and loading
    # a compiled module) that prepare did itself, outside the first call;
    # result.compile_ms is this plus the first call (iree on a GPU loads its
    # module in prepare, before the device clock starts tracing).
    compile_ms: float = 0.0
    # after_call(what): checks of the code under test the runner makes after
    # every call (the first, each warmup, calibrate, each sample), outside
    # the sample, what naming the call ("during a timed call"); raises Failed
    # to refuse the cell (the candidates backend: no thread of the
    # candidate's still running). after_samples: once, after the last sample
    # (the candidates backend: its output is still right).
    after_call: Callable[[str], None] | None = None
    after_samples: Callable[[], None] | None = None


class Timer:
    """Times one call. The default uses the host clock; a framework on an
    asynchronous device overrides time() (device events, or a sync), and
    xbench_py.devclock.device_timer wraps it in the protocol's device clock where
    the device has one (docs/protocol.md, "What one sample is").
    label is the first word of env.timing for this clock (xbench_py.devclock)."""

    description = "time.perf_counter"
    label = "host-clock"

    def time(self, fn: Callable[[], Any]) -> float:
        t0 = _guard.perf_counter()  # the harness's reference, not time.perf_counter (xbench_py.guard)
        fn()
        return (_guard.perf_counter() - t0) * 1000.0

    def first(self, fn: Callable[[], Any]) -> float:
        """The first (compile) call, timed for compile_ms: time() here; a
        device clock overrides it with the host time of the call, because
        compilation happens on the host."""
        return self.time(fn)

    def calibrate(self, fn: Callable[[], Any]) -> None:
        """After the warmup, before the samples: a clock that must learn
        something about the call first (xbench_py.devclock: whether tracing
        would enter its samples) makes its own untimed calls here."""

    def close(self) -> None:
        """After the last sample of a run (a device clock stops tracing)."""

    def flush(self) -> None:
        """--cold-cache: evict the caches before a timed call, outside it.
        This default writes a host buffer larger than the CPU's LLC
        (xbench_py.modes.cpu_flush); a GPU timer overrides it with a device
        write, and the runner refuses cold-cache on a GPU timer that does not."""
        _modes.cpu_flush()

    def graph(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        """--cuda-graph: return a callable that replays fn captured as a CUDA
        graph, or raise Unsupported with the reason (this default)."""
        raise Unsupported(f"CUDA graphs are not available with this timer ({self.description})")


_guard.protect_all("xbench_py.types.Timer", Timer, ("time", "first", "calibrate", "flush"))


def has_device_flush(timer: Timer) -> bool:
    """Whether timer flushes a device cache under --cold-cache (overrides
    Timer.flush), looking through a wrapping clock (one with has_device_flush)."""
    own = getattr(timer, "has_device_flush", None)
    return own() if own else type(timer).flush is not Timer.flush


# How frameworks word running out of memory, lower case: the harness's list
# (harness/bench/classify.go oomMarkers), read from the generated facts, so
# a backend and the harness give one error one status.
OOM_MARKERS = _facts.OOM_MARKERS


def is_oom(exc: BaseException) -> bool:
    """The one out-of-memory rule of every Python backend, the harness's: the
    exception's type names (its MRO, so torch.OutOfMemoryError, MemoryError
    and NumPy's _ArrayMemoryError match without importing either) and its
    message, lower case, contain one of OOM_MARKERS (PyTorch's CPU allocator's
    "can't allocate memory", XLA's RESOURCE_EXHAUSTED, ...)."""
    text = " ".join(t.__name__ for t in type(exc).__mro__) + " " + str(exc)
    text = text.lower()
    return any(m in text for m in OOM_MARKERS)


def failure_message(exc: BaseException) -> str:
    """result.message of an exception: "<ExcType>: <msg>" on one line, so the
    last line of the message (what the harness shows) is the exception line,
    however many lines the framework's message had. The traceback goes to
    stderr separately."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def load_module(name: str):
    """Import a framework's optional module (its GEMM file), or None when the
    module itself is absent; an import error inside it still raises."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:
            return None
        raise


def gemm_caps(module, devices: tuple) -> WorkloadCaps | None:
    """The gemm capability entry of a framework's GEMM module over the
    framework's devices (rocm counts as cuda), or None without a module."""
    if module is None:
        return None
    dts = [d for d in GEMM_DTYPES if any(d in module.DTYPES.get(_gemm_kind(k), ()) for k in devices)]
    return WorkloadCaps("gemm", phases=("forward",), devices=tuple(devices),
                        values={"dtype": tuple(dts), "layout": GEMM_LAYOUTS})


def attention_caps(devices: tuple, dtypes: tuple = ATTENTION_DTYPES, phases: tuple = ATTENTION_PHASES,
                   head_dims: tuple = ()) -> WorkloadCaps:
    """The attention capability entry of a backend or variant: the phases,
    devices and dtypes it runs, and the head dims when it runs only some
    (every parameter value otherwise)."""
    values = {"dtype": tuple(dtypes)}
    if head_dims:
        values["head_dim"] = tuple(str(d) for d in head_dims)
    return WorkloadCaps("attention", phases=tuple(phases), devices=tuple(devices), values=values)


def scan_caps(devices: tuple, dtypes: tuple = SCAN_DTYPES, semirings: tuple = SCAN_SEMIRINGS,
              phases: tuple = SCAN_PHASES) -> WorkloadCaps:
    """The scan capability entry of a backend or variant: the phases,
    devices, dtypes and semirings it runs (entropy is forward only: the
    harness refuses it with a backward phase before any backend sees it)."""
    return WorkloadCaps("scan", phases=tuple(phases), devices=tuple(devices),
                        values={"dtype": tuple(dtypes), "semiring": tuple(semirings)})


def _gemm_kind(kind: str) -> str:
    return "cpu" if kind == "cpu" else "cuda"  # a ROCm torch/jax device is "cuda" to the GEMM modules


class Framework:
    """Base class of a framework file's backend; see the module docstring.
    name and description are filled from plugin.json by main()."""

    name = ""
    description = ""
    framework = ""
    capabilities = Capabilities()
    variants: tuple = ()
    gemm = None  # the framework's GEMM module, if it has one

    def versions(self) -> dict:
        return {}

    def resolve_device(self, requested: str) -> Device:
        if requested in ("auto", "cpu"):
            return Device("cpu", cpu_name(), count=1)
        raise Unsupported(f"device {requested} is not available to {self.name}; available: cpu")

    def timer(self, device: Device) -> Timer:
        return Timer()

    def _gemm_module(self, cfg, device: Device):
        if self.gemm is None:
            raise Unsupported(f"workload gemm is not supported by {self.name}: it has no GEMM module")
        kind = _gemm_kind(device.kind)
        have = tuple(self.gemm.DTYPES.get(kind, ()))
        if cfg.dtype not in have:
            raise Unsupported(f"dtype {cfg.dtype} of workload gemm is not supported by {self.name} on {device.kind} "
                              f"(supported there: {_join(have)})")
        return self.gemm, kind

    def prepare_gemm(self, cfg, variant: str, device: Device, seed: int) -> Prepared:
        mod, kind = self._gemm_module(cfg, device)
        step = mod.prepare(cfg.to_params(), kind, seed)
        # A module whose prepare makes the first call (a JIT compiling and
        # autotuning there) says what that took, so compile_ms keeps it.
        return Prepared(step=step, num_params=0, compile_ms=float(getattr(step, "compile_ms", 0.0)))

    def export_gemm(self, cfg, variant: str, device: Device, weights: dict, inputs: dict) -> dict:
        mod, kind = self._gemm_module(cfg, device)
        return {"c": mod.export(cfg.to_params(), kind, inputs["a"], inputs["b"])}

    def reset_peak_memory(self, device: Device) -> None:
        pass

    def peak_memory_bytes(self, device: Device) -> int:
        return 0

    def release(self) -> None:
        gc.collect()

    def calibrate(self, device: Device, dtypes: list) -> dict:
        raise Unsupported(f"backend {self.name} cannot calibrate")

    def profile(self, device: Device, body: Callable[[], None], trace_path: str) -> dict:
        # Never called: xbench_py.profile answers "cannot profile" when a
        # framework does not override this.
        raise Unsupported(f"backend {self.name} cannot profile")

    def info(self) -> dict:
        d = {"name": self.name, "description": self.description, "capabilities": self.capabilities.to_json()}
        if self.variants:
            d["variants"] = [v.to_json() for v in self.variants]
        return d


def cpu_name() -> str:
    """The CPU model from /proc/cpuinfo, or platform's guess elsewhere."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine()
