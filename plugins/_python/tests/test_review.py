"""The static review of candidate files (xbench_py.review): each class of
pattern found where it is, named with its line; an honest candidate and a
docstring that merely says "half" find nothing."""

import pytest

from xbench_py import review

CASES = [
    ("honest", "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, a, b):\n        return a @ b\n", []),
    ("docstring", '"""Uses half the memory."""\nimport torch\n', []),
    ("threads", "import threading\nt = threading.Thread(target=print)\n",
     ["threads (line 1: import threading; line 2: threading.Thread)"]),
    ("pool", "from concurrent.futures import ThreadPoolExecutor\n",
     ["threads (line 1: import concurrent.futures)"]),
    ("streams", "import torch\ns = torch.cuda.Stream()\n", ["streams (line 2: torch.cuda.Stream)"]),
    ("stream in cuda source", 'src = """#include <cuda.h>\ncudaStream_t s; cudaStreamCreate(&s);"""\n',
     ["streams (line 1: cudaStream_t in a source string)"]),
    ("timers", "import time\nt0 = time.perf_counter()\n", ["timer names (line 2: time.perf_counter)"]),
    ("patch", "import torch\ntorch.cuda.synchronize = print\n",
     ["replaces a library attribute (line 2: torch.cuda.synchronize = ...)", "timer names (line 2: torch.cuda.synchronize)"]),
    ("swallow", "try:\n    x = 1\nexcept Exception:\n    x = 0\n", ["try/except that swallows errors (line 3: except Exception)"]),
    ("bare swallow", "try:\n    x = 1\nexcept:\n    pass\n", ["try/except that swallows errors (line 3: except)"]),
    ("re-raise is fine", "try:\n    x = 1\nexcept Exception:\n    raise\n", []),
    ("narrow except is fine", "try:\n    x = 1\nexcept KeyError:\n    x = 0\n", []),
    ("precision", "import torch\ny = x.half()\ntorch.backends.cuda.matmul.allow_tf32 = True\n",
     ["replaces a library attribute (line 3: torch.backends.cuda.matmul.allow_tf32 = ...)",
      "precision downgrade (line 2: x.half; line 3: torch.backends.cuda.matmul.allow_tf32)"]),
    ("bf16 in cuda source", 'src = "__global__ void k(__nv_bfloat16* x) {}"\n',
     ["precision downgrade (line 1: __nv_bfloat16 in a source string)"]),
    ("subclass", "import torch\nclass L(torch.Tensor):\n    def __torch_function__(cls): pass\n",
     ["tensor subclass (line 3: __torch_function__)"]),
    ("reference", "class ModelNew(Model):\n    pass\n", ["calls into the reference Model (line 1: Model)"]),
    ("syntax error", "def f(:\n", ["does not parse (line 1: invalid syntax)"]),
]


@pytest.mark.parametrize("name,source,want", CASES, ids=[c[0] for c in CASES])
def test_review_finds_each_class(name, source, want):
    assert review.review_source(source) == want


def test_review_file_of_a_missing_file_is_empty(tmp_path):
    assert review.review_file(str(tmp_path / "none.py")) == []
