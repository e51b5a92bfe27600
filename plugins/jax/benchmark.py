#!/usr/bin/env python3
"""jax backend entry point: everything but the model lives in
plugins/_python/xbench_py/types.py; run with --help for the flags."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(HERE), "_python"), HERE]

from xbench_py import cli  # noqa: E402


def load():
    # Imported only after the contract has checked that jax is installed
    # (jax_backend sets XLA_PYTHON_CLIENT_PREALLOCATE before importing jax).
    import jax_backend

    return jax_backend.Backend()


if __name__ == "__main__":
    cli.main(HERE, load)
