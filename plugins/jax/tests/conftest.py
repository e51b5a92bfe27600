import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.dirname(HERE)
PLUGINS = os.path.dirname(PLUGIN)
# jax_*.py, then the pytorch backend (model.py, backend.py): the reference.
sys.path[:0] = [os.path.join(PLUGINS, "_python"), PLUGIN, os.path.join(PLUGINS, "pytorch")]
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
