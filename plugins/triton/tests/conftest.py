import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.dirname(HERE)
PLUGINS = os.path.dirname(PLUGIN)
# plugins/_python: the contract xbench_py and every backend package (xbench_<name>)
sys.path.insert(0, os.path.join(PLUGINS, "_python"))
# The kernels run in Triton's interpreter here (no GPU in CI); this must be set
# before xbench_triton/model.py defines them.
os.environ["TRITON_INTERPRET"] = "1"


def run_compile_check(script: str, timeout: int = 600, **env_extra: str):
    """Run scripts/dev/triton/script (one of the *_compile_check.py) as the compiler sees
    it: in a process without TRITON_INTERPRET or the XBENCH_TRITON_ launch
    overrides, with FP fusion on as on the GPU. Returns the CompletedProcess
    (stdout holds the script's per-kernel lines)."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET" and not k.startswith("XBENCH_TRITON_")}
    env.update(TRITON_DEFAULT_FP_FUSION="1", **env_extra)
    return subprocess.run([sys.executable, os.path.join(os.path.dirname(PLUGINS), "scripts", "dev", "triton", script)], env=env,
                          capture_output=True, text=True, timeout=timeout)
