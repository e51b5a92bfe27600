"""xbench_contract: the Python side of the xbench backend protocol (docs/protocol.md).

Every Python backend shares this module, so the CLI, the JSON-lines serve loop,
the timing rules, the statistics and the result record are written once.

A backend is a folder plugins/<name>/ with
  plugin.json   {"name", "description", "runtime": "python", "entry": "benchmark.py",
                 "requires": [importable module names], "shell": nix dev shell}
  benchmark.py  thin: put plugins/_python and its own folder on sys.path, then
                    xbench_contract.main(HERE, load)
                where load() imports the framework file and returns an instance
                of its Framework subclass; main calls it only after checking
                `requires`, so a missing package gives one clear line (exit 2).
  the framework file(s): the model, and a Framework subclass (pytorch keeps
                the model in model.py and the subclass in backend.py).

What the Framework subclass defines (name/description come from plugin.json):
  framework      str, env.framework ("torch", "jax", ...)
  capabilities   Capabilities of the plain backend (what Info declares)
  variants       tuple of Variant(name, description, capabilities); addressed
                 as "<name>/<variant>", same model; prepare/export get the name
  versions()     {package: version} for env.versions
  resolve_device(requested) -> Device   requested is auto|cpu|cuda|rocm; raise
                 Unsupported when that device is not available here
  timer(device)  -> Timer: .description (env.timing) and .time(fn) -> ms; it
                 must wait for the device (events, sync, block_until_ready)
  prepare(cfg, variant, device, seed) -> Prepared(step, num_params, warnings)
                 builds model + inputs once; step() is one timed call
  export(cfg, variant, device, weights, inputs) -> {name: numpy array}
                 one untimed pass; weights/inputs are numpy (float32, tokens
                 int32), already checked against the spec's names and shapes;
                 the contract writes the outputs as F32 (F64 for float64)
  optional: reset_peak_memory(device), peak_memory_bytes(device) -> int,
            is_oom(exc) -> bool, release() (called after every request),
            calibrate(device, dtypes) -> {"matmul_tflops": {dtype: TFLOP/s},
              "copy_gbps": GB/s, "method": str}: the device's ceilings for
              `xbench calibrate` (op "calibrate"); skip dtypes the device lacks.
  Raise Unsupported anywhere for a combination it cannot run; any other
  exception becomes status failed (or oom when is_oom says so).

The contract does: flag parsing and validation (ConfigError -> exit 2 / error
reply), capability and variant checks (-> status unsupported), the timing
rules (first call -> compile_ms, warmup, repeats), stats, warnings, the result
record, export file I/O, and the serve loop (stdout reserved for replies).

Entry points (in xbench_cli.py / xbench_runner.py, reached through this module):
  main(plugin_dir, load)  the CLI; --serve runs the JSON-lines loop.
                          Exit: 0 ok, 1 status not ok, 2 bad input/missing package
  run(fw, cfg, variant, device, seed) -> result dict
  export(fw, cfg, variant, device, weights_path, inputs_path, output_path) -> dict
  serve(fw) -> exit code

Re-exported helpers: xbench_stats (summarize, tokens_per_s), xbench_spec (SIZES,
model_size, BASE_LR, EPS, ROPE_THETA, INIT_STD, param_specs, inner_param_specs,
count_params, init_params, perturbed_params, random_tokens, random_inner_inputs) and, loaded on
first use because they need numpy, read_safetensors / write_safetensors.
"""

from __future__ import annotations

import gc
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from xbench_spec import (  # noqa: F401  (re-exported for framework files)
    BASE_LR, EPS, INIT_STD, ROPE_THETA, SIZES, SIZE_ALIASES, ModelSize, ParamSpec,
    count_params, init_params, inner_param_specs, perturbed_params, model_size, param_specs,
    random_inner_inputs, random_tokens,
)
from xbench_stats import CV_WARN_THRESHOLD, CV_WARNING, summarize, tokens_per_s  # noqa: F401

__all__ = [
    # types and errors
    "Capabilities", "Variant", "Device", "Config", "Prepared", "Timer", "Framework",
    "ConfigError", "Unsupported", "cpu_name",
    # entry points (lazy)
    "main", "run", "export", "serve",
    # spec facts
    "SIZES", "SIZE_ALIASES", "ModelSize", "ParamSpec", "model_size", "BASE_LR", "EPS", "INIT_STD", "ROPE_THETA",
    "param_specs", "inner_param_specs", "count_params", "init_params", "perturbed_params", "random_tokens", "random_inner_inputs",
    # statistics and tensors
    "summarize", "tokens_per_s", "CV_WARN_THRESHOLD", "CV_WARNING", "read_safetensors", "write_safetensors",
    "SCHEMA_VERSION", "WORKLOADS", "TTT_TYPES", "PHASES", "DTYPES", "BACKBONES", "DEVICES",
]

SCHEMA_VERSION = 1
WORKLOADS = ("ttt",)
TTT_TYPES = ("linear", "mlp")
PHASES = ("forward", "backward", "inner_only")
DTYPES = ("float32", "tf32", "bfloat16", "float16", "float64")
BACKBONES = ("transformer", "mamba")
DEVICES = ("auto", "cpu", "cuda", "rocm")


_LAZY = {
    "read_safetensors": "xbench_safetensors", "write_safetensors": "xbench_safetensors",
    "main": "xbench_cli", "run": "xbench_runner", "export": "xbench_runner", "serve": "xbench_runner",
}


def __getattr__(name: str):
    # Lazy re-exports. The safetensors helpers import numpy, which must not be
    # needed before main() has checked the backend's requirements; the runner
    # (CLI, serve loop, timing, results) imports this module, so importing it
    # here eagerly would be circular.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'xbench_contract' has no attribute {name!r}")


class ConfigError(ValueError):
    """A request that is malformed (not merely unsupported): exit 2 on the
    command line, an {"error": ...} reply while serving."""


class Unsupported(Exception):
    """Raised by a framework for a combination it cannot run: the result gets
    status "unsupported" with this message."""


@dataclass(frozen=True)
class Capabilities:
    workloads: tuple = WORKLOADS
    ttt_types: tuple = TTT_TYPES
    phases: tuple = PHASES
    dtypes: tuple = DTYPES
    devices: tuple = ("cpu",)
    backbones: tuple = ("transformer",)

    def to_json(self) -> dict:
        return {k: list(v) for k, v in asdict(self).items()}

    def refusal(self, cfg: "Config", who: str) -> str | None:
        """Why cfg is outside these capabilities, or None if it is inside."""
        for what, value, allowed in (
            ("workload", cfg.workload, self.workloads),
            ("ttt_type", cfg.ttt_type, self.ttt_types),
            ("phase", cfg.phase, self.phases),
            ("dtype", cfg.dtype, self.dtypes),
            ("backbone", cfg.backbone, self.backbones),
        ):
            if value not in allowed:
                return f"{what} {value} is not supported by {who}; supported: {', '.join(allowed)}"
        return None


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


@dataclass
class Config:
    """result.Config. model_size is canonical ("1b", never "1.3b")."""

    workload: str = "ttt"
    model_size: str = "125m"
    ttt_type: str = "linear"
    backward: bool = False
    inner_only: bool = False
    batch: int = 1
    seq_len: int = 2048
    mini_batch: int = 16
    dtype: str = "float32"
    backbone: str = "transformer"
    warmup: int = 3
    repeats: int = 10

    @property
    def phase(self) -> str:
        return "inner_only" if self.inner_only else "backward" if self.backward else "forward"

    @property
    def size(self) -> ModelSize:
        return model_size(self.model_size)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: Any) -> "Config":
        """Parse and validate a protocol config object (ConfigError if bad)."""
        if not isinstance(d, dict):
            raise ConfigError(f"config must be a JSON object, got {type(d).__name__}")
        known = cls.__dataclass_fields__
        unknown = sorted(set(d) - set(known))
        if unknown:
            raise ConfigError(f"config has unknown field(s) {', '.join(unknown)}; known: {', '.join(known)}")
        cfg = cls()
        for k, v in d.items():
            want = type(getattr(cfg, k))
            if type(v) is not want:  # bool is not accepted as int, nor 1 as True
                raise ConfigError(f"config field {k} = {v!r} must be a JSON {'boolean' if want is bool else want.__name__}")
            setattr(cfg, k, v)
        cfg.validate(flags=False)
        return cfg

    def validate(self, flags: bool = True) -> None:
        """Raise ConfigError naming the flag (or JSON field), value and what is allowed."""
        def nm(field_name: str) -> str:
            return "--" + field_name.replace("_", "-") if flags else field_name

        self.model_size = SIZE_ALIASES.get(self.model_size, self.model_size)
        for fname, allowed in (
            ("workload", WORKLOADS), ("model_size", tuple(SIZES) + tuple(SIZE_ALIASES)),
            ("ttt_type", TTT_TYPES), ("dtype", DTYPES), ("backbone", BACKBONES),
        ):
            value = getattr(self, fname)
            if value not in allowed:
                raise ConfigError(f"{nm(fname)} {value!r} is not allowed; choose from {', '.join(allowed)}")
        for fname, least in (("batch", 1), ("seq_len", 1), ("mini_batch", 1), ("warmup", 0), ("repeats", 1)):
            value = getattr(self, fname)
            if value < least:
                raise ConfigError(f"{nm(fname)} {value} is not allowed; it must be an integer >= {least}")
        if self.seq_len % self.mini_batch:
            raise ConfigError(
                f"{nm('seq_len')} {self.seq_len} is not a multiple of {nm('mini_batch')} {self.mini_batch}; "
                f"use a multiple of {self.mini_batch} (e.g. {max(1, self.seq_len // self.mini_batch) * self.mini_batch})"
            )


@dataclass
class Prepared:
    """What Framework.prepare returns: step() runs one timed call (forward,
    forward+backward, or the inner loop) and may return its outputs (a timer
    can wait on them); num_params is result.num_params."""

    step: Callable[[], Any]
    num_params: int
    warnings: list = field(default_factory=list)


class Timer:
    """Times one call. The default uses the host clock; a framework on an
    asynchronous device overrides time() (device events, or a sync)."""

    description = "time.perf_counter"

    def time(self, fn: Callable[[], Any]) -> float:
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1000.0


class Framework:
    """Base class of a framework file's backend; see the module docstring.
    name and description are filled from plugin.json by main()."""

    name = ""
    description = ""
    framework = ""
    capabilities = Capabilities()
    variants: tuple = ()

    def versions(self) -> dict:
        return {}

    def resolve_device(self, requested: str) -> Device:
        if requested in ("auto", "cpu"):
            return Device("cpu", cpu_name(), count=1)
        raise Unsupported(f"device {requested} is not available to {self.name}; available: cpu")

    def timer(self, device: Device) -> Timer:
        return Timer()

    def prepare(self, cfg: Config, variant: str, device: Device, seed: int) -> Prepared:
        raise NotImplementedError

    def export(self, cfg: Config, variant: str, device: Device, weights: dict, inputs: dict) -> dict:
        raise NotImplementedError

    def reset_peak_memory(self, device: Device) -> None:
        pass

    def peak_memory_bytes(self, device: Device) -> int:
        return 0

    def is_oom(self, exc: BaseException) -> bool:
        msg = str(exc)
        return "out of memory" in msg.lower() or "RESOURCE_EXHAUSTED" in msg

    def release(self) -> None:
        gc.collect()

    def calibrate(self, device: Device, dtypes: list) -> dict:
        raise Unsupported(f"backend {self.name} cannot calibrate")

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

