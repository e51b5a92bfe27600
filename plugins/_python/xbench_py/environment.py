"""The environment xbench runs in: which machine this is (no GPU, NVIDIA,
AMD), the pinned requirements set that machine gets, and whether an
interpreter's frameworks are versions xbench supports. One definition,
read by setup.sh (machine detection, --dry-run, --python) and by
`xbench doctor` (its --json).

It runs under any Python 3.11+ without xbench's packages (setup.sh calls it
with the system's python3 before a venv exists): the standard library only,
and framework versions are read from package metadata, never by importing
a framework (the device probes of --probe, for xbench doctor, are the exception).

    python -m xbench_py.environment machine          # cpu|nvidia|amd and why
    python -m xbench_py.environment plan [--machine M]   # files, index, packages
    python -m xbench_py.environment check [--machine M] [--json] [--probe]
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass

MACHINES = ("cpu", "nvidia", "amd")

# Each machine's requirements files, installed in this order into one venv
# keyed by their content (scripts/lib.sh setup_venv). The CPU set's file
# name and content are CI's cache key: keep them.
REQUIREMENTS = {
    "cpu": ("requirements.txt",),
    "nvidia": ("requirements-nvidia.txt",),
    "amd": ("requirements-amd-torch.txt", "requirements-amd.txt"),
}
# The file resolved with PyTorch's ROCm index besides PyPI, and the index.
ROCM_TORCH_FILE = "requirements-amd-torch.txt"
ROCM_INDEX_ENV = "XBENCH_TORCH_ROCM_INDEX"
ROCM_INDEX_DEFAULT = "https://download.pytorch.org/whl/rocm7.2"


def rocm_index(env=os.environ) -> str:
    return env.get(ROCM_INDEX_ENV) or ROCM_INDEX_DEFAULT


def index_args(req_file: str, env=os.environ) -> list[str]:
    """pip's index arguments for one requirements file."""
    return ["--extra-index-url", rocm_index(env)] if os.path.basename(req_file) == ROCM_TORCH_FILE else []


class MachineError(ValueError):
    """A machine named by XBENCH_MACHINE or --machine that is not one of MACHINES."""


def detect(env=os.environ, which=shutil.which, exists=os.path.exists, run=subprocess.run) -> tuple[str, str]:
    """(machine, how it was found). XBENCH_MACHINE names it outright;
    otherwise NVIDIA when `nvidia-smi -L` lists a GPU, AMD when `rocm-smi`
    runs or /dev/kfd (ROCm's kernel driver) exists, else cpu."""
    forced = env.get("XBENCH_MACHINE", "")
    if forced:
        if forced not in MACHINES:
            raise MachineError(f"XBENCH_MACHINE={forced!r} is not a machine (allowed: {', '.join(MACHINES)})")
        return forced, "XBENCH_MACHINE"

    def ok(cmd):
        try:
            p = run(cmd, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return p.stdout if p.returncode == 0 else None

    if which("nvidia-smi"):
        out = ok(["nvidia-smi", "-L"])
        if out and "GPU" in out:
            return "nvidia", "nvidia-smi -L: " + out.strip().splitlines()[0]
    if which("rocm-smi") and ok(["rocm-smi"]) is not None:
        return "amd", "rocm-smi runs"
    if exists("/dev/kfd"):
        return "amd", "/dev/kfd exists (ROCm's kernel driver)"
    return "cpu", "no nvidia-smi listing a GPU, no rocm-smi, no /dev/kfd"


def requirement_lines(path: str) -> list[str]:
    """A requirements file's requirements, comments and blanks dropped."""
    out = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line)
    return out


_PIN = re.compile(r"^([A-Za-z0-9_.-]+)(\[[^\]]*\])?==")


def pins(machine: str, root: str) -> dict[str, str]:
    """{normalized distribution name: its pinned requirement} of a machine's set."""
    out = {}
    for f in REQUIREMENTS[machine]:
        for line in requirement_lines(os.path.join(root, f)):
            m = _PIN.match(line)
            if m:
                out[norm(m.group(1))] = line.split(";", 1)[0].strip()
    return out


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def release(version: str) -> tuple[int, ...]:
    """The numeric release of a version ("2.15.0+cu132" -> (2, 15, 0))."""
    m = re.match(r"\d+(\.\d+)*", version or "")
    return tuple(int(x) for x in m.group(0).split(".")) if m else ()


@dataclass(frozen=True)
class Framework:
    """A package xbench's backends import: the module, who needs it, the
    oldest version known to work (what the committed H100 results ran:
    torch 2.11, triton 3.6; else the pin, where nothing older ran; "" for a
    package checked for presence only), and the machines it is part of."""

    module: str
    dists: tuple  # distributions that provide the module, the set's own first
    backends: tuple
    floor: str
    machines: tuple = MACHINES
    role: str = ""


FRAMEWORKS = (
    Framework("torch", ("torch",), ("pytorch", "triton", "candidates", "flash-semicrf"), "2.11"),
    Framework("triton", ("triton", "pytorch-triton-rocm"), ("triton",), "3.6"),
    Framework("jax", ("jax",), ("jax",), "0.10.2"),
    Framework("jax_plugins.xla_cuda13", ("jax-cuda13-plugin", "jax-cuda12-plugin"), ("jax",), "0.10.2", ("nvidia",),
              "JAX's CUDA plugin (without it JAX sees no NVIDIA GPU)"),
    Framework("jax_plugins.xla_rocm7", ("jax-rocm7-plugin",), ("jax",), "0.10.2", ("amd",),
              "JAX's ROCm plugin (without it JAX sees no AMD GPU)"),
    Framework("iree.runtime", ("iree-base-runtime",), ("iree",), "3.13"),
    Framework("iree.compiler", ("iree-base-compiler",), ("iree",), "3.13", MACHINES,
              "compiles IREE modules on first use (without it, only precompiled modules run: docs/iree.md)"),
    Framework("cupti", ("cupti-python",), ("pytorch", "triton", "jax", "iree", "candidates"), "13.0", ("nvidia",),
              "the device clock (CUPTI) of the Python backends; without it they time on their own clock"),
    Framework("flash_semicrf", ("flash-semicrf",), ("flash-semicrf",), "0.2.0"),
    # presence only: no version of these is known to fail, none older than the pins known to work
    Framework("numpy", ("numpy",), ("pytorch", "jax", "triton", "iree", "candidates", "flash-semicrf"), ""),
    Framework("safetensors", ("safetensors",), ("pytorch", "jax", "triton", "candidates", "flash-semicrf"), ""),
)


@dataclass
class Finding:
    """One framework in one interpreter: status ok, missing, unsupported
    (older than the floor) or mismatch (built for another CUDA/ROCm, or
    two parts of one release that differ); fix is the one command."""

    name: str
    backends: list
    status: str
    version: str = ""
    expected: str = ""
    why: str = ""
    fix: str = ""


def installed(dist: str) -> str:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return ""


def torch_build() -> dict:
    """torch's CUDA and HIP versions, from torch/version.py (not imported)."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        spec = None
    if not spec or not spec.submodule_search_locations:
        return {}
    path = os.path.join(list(spec.submodule_search_locations)[0], "version.py")
    try:
        text = open(path).read()
    except OSError:
        return {}
    out = {}
    for key in ("cuda", "hip"):
        m = re.search(rf"^{key}\s*(?::\s*[^=]+)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
        out[key] = m.group(1) if m else ""
    return out


def install_cmd(python: str, dist: str, pinned: dict, env=os.environ) -> str:
    """The one command that installs dist as the machine's set pins it
    (ROCm builds from PyTorch's index)."""
    req = pinned.get(norm(dist), dist)
    extra = f" --extra-index-url {rocm_index(env)}" if "+rocm" in req else ""
    return f"{python} -m pip install{extra} '{req}'"


def check(machine: str, root: str, python: str = ".venv/bin/python", version=installed, build=torch_build,
          env=os.environ) -> list[Finding]:
    """Every framework of the machine's set in this interpreter."""
    pinned = pins(machine, root)
    out = []
    for fw in FRAMEWORKS:
        if machine not in fw.machines:
            continue
        dist, ver = fw.dists[0], ""
        for d in fw.dists:
            if version(d):
                dist, ver = d, version(d)
                break
        f = Finding(dist, list(fw.backends), "ok", ver, f">={fw.floor}" if fw.floor else "any version")
        # ROCm's Triton comes with PyTorch's ROCm build (pytorch-triton-rocm)
        fix_dist = "torch" if machine == "amd" and fw.module == "triton" else fw.dists[0]
        if not ver:
            f.status, f.why, f.fix = "missing", fw.role, install_cmd(python, fix_dist, pinned, env)
        elif fw.floor and release(ver) < release(fw.floor):
            f.status, f.why = "unsupported", f"{dist} {ver} is older than xbench supports ({fw.floor} or newer)"
            f.fix = install_cmd(python, fix_dist, pinned, env)
        out.append(f)
    out += mismatches(machine, out, pinned, python, build(), env)
    return out


def mismatches(machine: str, found: list, pinned: dict, python: str, torch: dict, env=os.environ) -> list[Finding]:
    """The CUDA/ROCm versions that must agree: torch built for this GPU's
    platform; cupti-python of the CUDA major torch and JAX's plugin bring;
    IREE's compiler and runtime of one release."""
    out = []
    have = {f.name: f.version for f in found if f.version}
    if machine == "nvidia" and have.get("torch") and torch.get("hip"):
        out.append(Finding("torch", ["pytorch", "triton"], "mismatch", have["torch"], "a CUDA build",
                           f"torch {have['torch']} is a ROCm build on an NVIDIA machine", install_cmd(python, "torch", pinned, env)))
    if machine == "amd" and have.get("torch") and not torch.get("hip"):
        out.append(Finding("torch", ["pytorch", "triton"], "mismatch", have["torch"], "a ROCm build (+rocm)",
                           f"torch {have['torch']} is not a ROCm build (CUDA {torch.get('cuda') or 'none'})",
                           install_cmd(python, "torch", pinned, env)))
    if machine == "nvidia" and have.get("cupti-python"):
        major = release(have["cupti-python"])[:1]
        cudas = {"torch": release(torch.get("cuda", ""))[:1]}
        for plugin in ("jax-cuda13-plugin", "jax-cuda12-plugin"):
            if have.get(plugin):
                cudas[plugin] = (int(plugin[8:10]),)
        for who, cuda in cudas.items():
            if cuda and cuda != major:
                out.append(Finding("cupti-python", ["pytorch", "triton", "jax", "iree", "candidates"], "mismatch",
                                   have["cupti-python"], f"CUDA {cuda[0]}.x (as {who})",
                                   f"cupti-python {have['cupti-python']} is for CUDA {major[0]}, {who} brings CUDA {cuda[0]}",
                                   f"{python} -m pip install 'cupti-python=={cuda[0]}.*'"))
    rt, cc = have.get("iree-base-runtime"), have.get("iree-base-compiler")
    if rt and cc and rt != cc:
        out.append(Finding("iree-base-compiler", ["iree"], "mismatch", cc, f"=={rt} (the runtime's release)",
                           "a module must be compiled by the release that runs it",
                           f"{python} -m pip install 'iree-base-compiler=={rt}'"))
    return out


def clock(machine: str) -> dict:
    """The Python backends' clock on this machine (xbench_py.devclock)."""
    if machine == "cpu":
        return {"device_clock": False, "label": "host-clock", "why": "no GPU: the host clock is the clock"}
    if machine == "amd":
        return {"device_clock": False, "label": "framework clock",
                "why": "ROCm: no CUPTI (rocprofiler not wired)", "fix": ""}
    from xbench_py import devclock

    src, why = devclock.cupti_source()
    if src is not None:
        return {"device_clock": True, "label": devclock.CUPTI_SPAN, "why": ""}
    return {"device_clock": False, "label": "framework clock", "why": why}


def gpu(machine: str, load_torch=lambda: importlib.import_module("torch")) -> dict:
    """Whether the GPU this machine has can be opened, asked of torch (the
    framework most backends share): {"opened", "by", "devices", "why"}."""
    if machine == "cpu":
        return {"opened": False, "by": "", "devices": [], "why": "no GPU"}
    try:
        torch = load_torch()
    except Exception as e:  # noqa: BLE001 - any failure: the probe could not run
        return {"opened": False, "by": "", "devices": [], "why": f"torch does not import ({type(e).__name__}: {e})"}
    by = f"torch {torch.__version__}"
    try:
        torch.cuda.init()  # raises with the driver's reason (too old, no device, no permission)
        n = torch.cuda.device_count()
        if n == 0:
            return {"opened": False, "by": by, "devices": [], "why": "torch sees no GPU (device_count 0)"}
        return {"opened": True, "by": by, "devices": [torch.cuda.get_device_name(i) for i in range(n)], "why": ""}
    except Exception as e:  # noqa: BLE001
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        return {"opened": False, "by": by, "devices": [], "why": msg}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m xbench_py.environment")
    p.add_argument("what", choices=["machine", "plan", "check"])
    p.add_argument("--machine", default="", help="cpu, nvidia or amd (default: detect)")
    p.add_argument("--root", default=os.getcwd(), help="the xbench checkout")
    p.add_argument("--python", default=".venv/bin/python", help="the interpreter named in fix commands")
    p.add_argument("--json", action="store_true")
    p.add_argument("--probe", action="store_true", help="probe the device: the clock (imports CUPTI), the GPU (imports torch)")
    a = p.parse_args(argv)
    try:
        machine, how = (a.machine, "--machine") if a.machine else detect()
    except MachineError as e:
        print(f"setup: {e}", file=sys.stderr)
        return 2
    if machine not in MACHINES:
        print(f"setup: --machine {machine!r} is not a machine (allowed: {', '.join(MACHINES)})", file=sys.stderr)
        return 2
    if a.what == "machine":
        print(f"{machine}\t{how}")
        return 0
    if a.what == "plan":
        print(f"machine: {machine} ({how})")
        for f in REQUIREMENTS[machine]:
            idx = index_args(f)
            print(f"{f}: pip install {' '.join(idx) + ' ' if idx else ''}-r {f}")
            for line in requirement_lines(os.path.join(a.root, f)):
                print(f"  {line}")
        return 0
    found = check(machine, a.root, a.python)
    bad = [f for f in found if f.status in ("unsupported", "mismatch")]
    if a.json:
        doc = {"machine": machine, "how": how, "python": sys.executable,
               "python_version": ".".join(map(str, sys.version_info[:3])),
               "frameworks": [asdict(f) for f in found]}
        if a.probe:
            doc["clock"] = clock(machine)
            doc["gpu"] = gpu(machine)
        print(json.dumps(doc, indent=1))
        return 0
    for f in found:
        line = f"  {f.name:<20} {f.version or '-':<16} {f.status}"
        if f.status != "ok":
            line += f" (expected {f.expected}{'; ' + f.why if f.why else ''}; used by {', '.join(f.backends)}): {f.fix}"
        print(line)
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
