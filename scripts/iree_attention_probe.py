"""Which iree attention modules hang or run on the GPU (issue 33): loads the
precompiled modules of a few attention configurations from the compile cache
and calls each through iree.runtime's cuda driver with a watchdog, printing the
first call's and the median of 5 calls' host time, or where it stuck.

    python3 scripts/iree_attention_probe.py CACHE_FOLDER [TIMEOUT_S]

Chosen to separate the suspects of the b32 h12 s512 d64 timeout: MHA (one
query head per kv head, g=1) against GQA, and a mask small enough for IREE
to hoist into a module initializer (s512) against one built each call."""
import faulthandler
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "plugins", "_python"))
import numpy as np  # noqa: E402
import iree.runtime as rt  # noqa: E402
from xbench_iree import cache as iree_cache  # noqa: E402
from xbench_iree import mlir as iree_mlir  # noqa: E402
from xbench_iree import targets as iree_targets  # noqa: E402
from xbench_iree import backend as iree_backend  # noqa: E402
from xbench_py import devclock  # noqa: E402

CASES = [  # b, h, kv_heads, s, d
    (32, 32, 8, 512, 128),    # GQA, s512 (mask in an initializer)
    (2, 12, 12, 8192, 64),    # MHA, mask built each call
    (32, 12, 12, 512, 64),    # the one that timed out: MHA and s512
    (16, 12, 12, 1024, 64),
]


def main():
    cache, timeout = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 60
    os.environ["XBENCH_COMPILE_CACHE"] = cache
    target = iree_targets.for_device("cuda")
    config = rt.Config("cuda")
    import ml_dtypes
    for b, h, kh, s, d in CASES:
        label, mlir = iree_mlir.for_params("attention", {"batch": b, "heads": h, "kv_heads": kh, "seq_len": s,
                                                          "kv_len": 0, "head_dim": d, "causal": "true",
                                                          "dtype": "bfloat16"})
        print(f"--- {label}", flush=True)
        try:
            vmfb, how = iree_cache.get(target, mlir, label)
        except Exception as e:  # noqa: BLE001
            print(f"    not loadable: {e}", flush=True)
            continue
        ctx = rt.SystemContext(config=config)
        ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
        fn = ctx.modules.module["attention"]
        rng = np.random.default_rng(0)
        q = rng.standard_normal((b, h, s, d), dtype=np.float32).astype(ml_dtypes.bfloat16)
        k = rng.standard_normal((b, kh, s, d), dtype=np.float32).astype(ml_dtypes.bfloat16)
        args = [rt.asdevicearray(config.device, x) for x in (q, k, k)]
        faulthandler.dump_traceback_later(timeout, exit=True)
        t0 = time.perf_counter()
        out = fn(*args)
        first = (time.perf_counter() - t0) * 1e3
        host = np.asarray(out.to_host()).astype(np.float32)
        ts = []
        for _ in range(5):
            t0 = time.perf_counter()
            fn(*args)
            ts.append((time.perf_counter() - t0) * 1e3)
        print(f"    first call {first:.1f} ms, median of 5 {statistics.median(ts):.3f} ms, out finite "
              f"{bool(np.isfinite(host).all())}", flush=True)
        # the backend's clock around the same call: the device clock over
        # iree_backend's GPU timer, as a run uses it (first, calibrate, samples)
        timer = devclock.device_timer(iree_backend.GPUTimer(config.device), "cuda")
        timer.first(lambda: fn(*args))
        timer.calibrate(lambda: fn(*args))
        spans = []
        for _ in range(5):
            timer.flush()
            spans.append(timer.time(lambda: fn(*args)))
        timer.close()
        faulthandler.cancel_dump_traceback_later()
        print(f"    through the backend's clock, cold: median {statistics.median(spans):.3f} ms "
              f"({timer.description[:60]})", flush=True)


if __name__ == "__main__":
    main()
