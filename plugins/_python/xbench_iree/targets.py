"""IREE compile targets: what iree-compile is told for each device, by name.

One definition of each target, used by the backend, the precompile script
(iree_precompile.py) and the AMD compile tests, so a module compiled on one
machine is found in the compile cache on another (the key is the MLIR text,
these flags and the IREE version: cache.py).

NVIDIA. IREE 3.13's table of known CUDA targets (KnownTargets.cpp,
getNVIDIAGPUTargetDetails) has no Hopper entry: --iree-cuda-target=sm_90 or
sm_90a compiles nothing ("missing GPU target in #hal.executable.target"),
and "hopper"/"h100" are unknown names. For every target it knows, its only
NVIDIA matrix instructions are Ampere's mma.sync (m16n8k16) and WMMA: it has
no wgmma, so an H100 runs IREE's Ampere-style kernels whatever the target.
Two ways onto the H100:
  sm_80     --iree-cuda-target=sm_80: PTX 7.6 for sm_80, JIT-compiled by the
            driver for the H100 (PTX is forward compatible).
  sm_90a    the same target description stated by hand as the module's
            hal.device.targets attribute with arch sm_90a, PTX 8.0 and the
            H100's 227 KiB of shared memory per block (Ampere's MMA list
            kept: it is all IREE can emit). The PTX says .target sm_90a.
XBENCH_IREE_CUDA_TARGET picks one (default below, set from the H100 probe).

AMD. --iree-rocm-target=gfx942 (MI300X) and gfx90a (MI250) are in IREE
3.13's table (MFMA matrix cores: v_mfma_f32_16x16x16_bf16 on gfx942,
v_mfma_f32_16x16x8bf16 on gfx90a for a bf16 matmul). gfx1030 (RX 6800,
RDNA2) is not ("Unknown ROCM target"; rdna2/rx6800 neither): like sm_90a it
is stated by hand, as IREE's own gfx1100 (RDNA3) description with the arch
changed and the MMA list emptied (RDNA2 has no WMMA; its 64 KiB of LDS per
workgroup, wave32/64 and 4 SIMDs per WGP are as RDNA3's). XBENCH_IREE_ROCM_TARGET
names the card's (default gfx942).

CPU. llvm-cpu for the host CPU ("host"): the key adds the CPU's model name,
since such code is only valid on that CPU.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_CUDA = "sm_80"
DEFAULT_ROCM = "gfx942"

# IREE 3.13's own description of sm_80 (printed by --compile-to=executable-
# configurations), with the arch, the PTX version and the shared memory
# limit changed to the H100's; see the module docstring.
_SM90A_TARGET = (
    '#hal.device.target<"cuda", [#hal.executable.target<"cuda", "cuda-nvptx-fb", {iree_codegen.target_info = '
    '#iree_gpu.target<arch = "sm_90a", features = "+ptx80", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, '
    'storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, mma = [<NV_MMA_SYNC_F32_16x8x16_F16>, '
    '<NV_MMA_SYNC_F16_16x8x16_F16>, <NV_MMA_SYNC_F32_16x8x16_BF16>, <NV_WMMA_F32_16x16x16_F16>, '
    '<NV_WMMA_F16_16x16x16_F16>], subgroup_size_choices = [32], max_workgroup_sizes = [1024, 1024, 1024], '
    'max_thread_count_per_workgroup = 1024, max_workgroup_memory_bytes = 232448, '
    'max_workgroup_counts = [2147483647, 65535, 65535]>>}>]>'
)


_GFX1030_TARGET = (
    '#hal.device.target<"hip", [#hal.executable.target<"rocm", "rocm-hsaco-fb", {abi = "hip", '
    'iree.encoding.resolver = #iree_gpu.gpu_encoding_resolver<>, iree_codegen.target_info = #iree_gpu.target<'
    'arch = "gfx1030", features = "", wgp = <compute = fp64|fp32|fp16|int64|int32|int16|int8, '
    'storage = b64|b32|b16|b8, subgroup = shuffle|arithmetic, dot = dp4xi8toi32, subgroup_size_choices = [32, 64], '
    'max_workgroup_sizes = [1024, 1024, 1024], max_thread_count_per_workgroup = 1024, '
    'max_workgroup_memory_bytes = 65536, max_workgroup_counts = [2147483647, 2147483647, 2147483647], '
    'max_load_instruction_bits = 128, simds_per_wgp = 4, vgpr_space_bits = 8192, workgroup_memory_bank_count = 64>>, '
    'ukernels = "none"}>]>'
)


@dataclass(frozen=True)
class Target:
    name: str  # the cache's and the result's label: "cpu", "sm_80", "sm_90a", "gfx942", ...
    driver: str  # iree.runtime driver: local-task, cuda, hip
    flags: tuple  # iree-compile flags
    device_attr: str = ""  # a hal.device.targets attribute stated in the module instead of flags

    def source(self, mlir: str) -> str:
        """The text compiled for this target: mlir itself, or mlir wrapped in
        a module that states the device target (affine-map aliases stay
        at the top level, where MLIR wants them)."""
        if not self.device_attr:
            return mlir
        lines = mlir.splitlines()
        aliases = [x for x in lines if x.startswith("#")]
        body = [x for x in lines if not x.startswith("#")]
        return "\n".join(aliases + [f"module attributes {{hal.device.targets = [{self.device_attr}]}} {{"]
                         + body + ["}", ""])

    def describe(self) -> str:
        how = f"hal.device.targets for {self.name} stated in the module (targets.py)" if self.device_attr else ""
        return " ".join(list(self.flags) + ([how] if how else []))


def cuda(name: str) -> Target:
    if name == "sm_90a":
        return Target("sm_90a", "cuda", (), _SM90A_TARGET)
    flags = ["--iree-hal-target-device=cuda", f"--iree-cuda-target={name}"]
    if name == "sm_89":
        flags.append("--iree-cuda-target-features=+ptx78")  # sm_89 needs PTX 7.8; IREE defaults to 7.6
    return Target(name, "cuda", tuple(flags))


def rocm(arch: str) -> Target:
    if arch == "gfx1030":
        return Target("gfx1030", "hip", (), _GFX1030_TARGET)
    return Target(arch, "hip", ("--iree-hal-target-device=hip", f"--iree-rocm-target={arch}"))


def cpu() -> Target:
    return Target("cpu", "local-task", ("--iree-hal-target-device=local",
                                        "--iree-hal-local-target-device-backends=llvm-cpu",
                                        "--iree-llvmcpu-target-cpu=host"))


def for_device(kind: str) -> Target:
    """The target of an xbench device kind (cpu, cuda, rocm)."""
    if kind == "cpu":
        return cpu()
    if kind == "cuda":
        return cuda(os.environ.get("XBENCH_IREE_CUDA_TARGET") or DEFAULT_CUDA)
    if kind == "rocm":
        return rocm(os.environ.get("XBENCH_IREE_ROCM_TARGET") or DEFAULT_ROCM)
    raise ValueError(f"iree: device {kind!r} has no target (allowed: cpu, cuda, rocm)")
