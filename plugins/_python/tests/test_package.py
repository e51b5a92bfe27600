"""xbench_py is a package of modules that import one way: no cycles (not
even through function-level imports), no facade that re-exports other
modules' names, each module importable on its own, and every backend
importing each name from the module that defines it."""

import ast
import os
import subprocess
import sys

import pytest

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = os.path.join(PYDIR, "xbench_py")
PLUGINS = os.path.dirname(PYDIR)
MODULES = sorted(f[:-3] for f in os.listdir(PKG) if f.endswith(".py") and f != "__init__.py")

# The layers, bottom up: a module may import only modules of lower layers.
LAYERS = [
    {"attention_ref", "dtypes", "facts", "guard", "modes", "problems", "review", "scan_ref", "tensors"},  # no xbench_py imports
    {"spec", "types"},
    {"workloads", "devclock"},
    {"runner", "environment"},
    {"profile", "burst"},
    {"serve"},
    {"cli"},
]


def imports_of(module: str) -> set:
    """The xbench_py modules a module imports anywhere in its body."""
    tree = ast.parse(open(os.path.join(PKG, module + ".py")).read())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "xbench_py":
            if node.module == "xbench_py":
                out |= {a.name for a in node.names}
            else:
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith("xbench_py.")}
    return out - {module}


def test_every_module_has_a_layer():
    assert sorted(set().union(*LAYERS)) == MODULES


@pytest.mark.parametrize("module", MODULES)
def test_imports_point_down(module):
    level = next(i for i, layer in enumerate(LAYERS) if module in layer)
    below = set().union(*LAYERS[:level]) if level else set()
    assert imports_of(module) <= below, f"{module} imports {sorted(imports_of(module) - below)} from its layer or above"


def test_no_cycles():
    # implied by the layers; checked on the graph itself so a layer table
    # edited to allow a cycle still fails
    graph = {m: imports_of(m) for m in MODULES}
    done, active = set(), []

    def visit(m):
        if m in active:
            pytest.fail("import cycle: " + " -> ".join(active[active.index(m):] + [m]))
        if m in done:
            return
        active.append(m)
        for n in sorted(graph[m]):
            visit(n)
        active.pop()
        done.add(m)

    for m in MODULES:
        visit(m)


@pytest.mark.parametrize("module", MODULES)
def test_no_facade(module):
    tree = ast.parse(open(os.path.join(PKG, module + ".py")).read())
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "__getattr__" not in names, f"{module} re-exports lazily (a facade)"
    assert "__all__" not in {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                             if isinstance(t, ast.Name)}


def test_each_module_imports_alone():
    # one interpreter per module, so none leans on another's earlier import
    code = "import importlib, sys; importlib.import_module('xbench_py.' + sys.argv[1])"
    env = dict(os.environ, PYTHONPATH=PYDIR)
    procs = {m: subprocess.Popen([sys.executable, "-c", code, m], env=env, stderr=subprocess.PIPE, text=True)
             for m in MODULES}
    failed = {m: p.communicate()[1].strip().splitlines()[-1:] for m, p in procs.items() if p.wait() != 0}
    assert not failed


def test_backends_import_from_the_package():
    """No backend, test or script imports the old flat modules
    (xbench_contract and friends): each name comes from its module."""
    flat = []
    for root, dirs, files in os.walk(os.path.dirname(PLUGINS)):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "results")]
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(root, f)
            try:
                tree = ast.parse(open(path, encoding="utf-8").read())
            except (SyntaxError, UnicodeDecodeError):
                continue
            for node in ast.walk(tree):
                mods = [node.module] if isinstance(node, ast.ImportFrom) and node.module else \
                    [a.name for a in node.names] if isinstance(node, ast.Import) else []
                flat += [f"{path}:{node.lineno} {m}" for m in mods
                         if m.split(".")[0] in {"xbench_" + x for x in MODULES} | {"xbench_contract", "xbench_safetensors"}]
    assert not flat
