"""Every Python backend is a package of its own under plugins/_python
(xbench_<plugin folder>, '-' as '_'), imported by that name only:

- no file of the repository imports a backend module by a bare name
  (`import backend`, `import model`, `from scan import ...`,
  `importorskip("gemm")`, `load_module("gemm")`) or by the flat
  names the backends had before they were packages (`triton_model`,
  `jax_backend`, ...), and none puts a backend's folder on sys.path;
- a plugin folder holds no module but its entry point (Python puts the
  entry's folder first on sys.path, so any other module there would be
  importable by a bare name);
- each Python plugin's entry loads its own package, one package per plugin;
- every backend package imported in one interpreter keeps its modules apart:
  each loaded module's name is the path of its file (xbench_triton.model is
  xbench_triton/model.py, not xbench_pytorch/model.py)."""

import ast
import glob
import importlib
import json
import os
import sys

import pytest

PYDIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLUGINS = os.path.dirname(PYDIR)
ROOT = os.path.dirname(PLUGINS)


def python_plugins() -> dict:
    """{plugin folder: manifest} of every runtime-python plugin."""
    out = {}
    for path in sorted(glob.glob(os.path.join(PLUGINS, "*", "plugin.json"))):
        with open(path) as f:
            m = json.load(f)
        if m.get("runtime") == "python":
            out[os.path.basename(os.path.dirname(path))] = m
    return out


PLUGIN_DIRS = python_plugins()


def package_of(folder: str) -> str:
    return "xbench_" + folder.replace("-", "_")


PACKAGES = sorted(d for d in os.listdir(PYDIR) if d.startswith("xbench_") and d != "xbench_py"
                  and os.path.isfile(os.path.join(PYDIR, d, "__init__.py")))


def modules_of(package: str) -> list:
    return sorted(f[:-3] for f in os.listdir(os.path.join(PYDIR, package)) if f.endswith(".py") and f != "__init__.py")


# The names a backend module must not be imported by: its own stem (bare),
# and the flat names of the folders-on-sys.path layout (triton_model.py, ...).
BARE = {m for p in PACKAGES for m in modules_of(p)} - set(sys.stdlib_module_names)
LEGACY = {f"{prefix}_{m}" for prefix, p in (("triton", "xbench_triton"), ("jax", "xbench_jax"), ("iree", "xbench_iree"))
          for m in modules_of(p)} | {"fsc_backend", "candidates_backend", "torch_profile"}


def python_files() -> list:
    out = []
    for root, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "results", "__pycache__")]
        out += [os.path.join(root, f) for f in files if f.endswith(".py")]
    return out


def test_every_python_plugin_has_its_package():
    assert PLUGIN_DIRS, "no runtime-python plugin found"
    missing = [f"{d} -> plugins/_python/{package_of(d)}" for d in PLUGIN_DIRS if package_of(d) not in PACKAGES]
    assert not missing, f"python plugins without their package: {missing}"


@pytest.mark.parametrize("folder", sorted(PLUGIN_DIRS))
def test_plugin_folder_holds_only_its_entry(folder):
    d = os.path.join(PLUGINS, folder)
    extra = sorted(f for f in os.listdir(d) if f.endswith(".py") and f != PLUGIN_DIRS[folder]["entry"])
    extra += sorted(f for f in os.listdir(d) if os.path.isfile(os.path.join(d, f, "__init__.py")))
    assert not extra, (f"plugins/{folder} holds {extra}: the entry's folder is on sys.path, so these import by bare "
                       f"names; move them into plugins/_python/{package_of(folder)}/")


@pytest.mark.parametrize("folder", sorted(PLUGIN_DIRS))
def test_entry_loads_its_own_package(folder):
    entry = os.path.join(PLUGINS, folder, PLUGIN_DIRS[folder]["entry"])
    tree = ast.parse(open(entry).read())
    load = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "load")
    pkgs = {n.module.split(".")[0] for n in ast.walk(load) if isinstance(n, ast.ImportFrom) and n.module}
    pkgs |= {a.name.split(".")[0] for n in ast.walk(load) if isinstance(n, ast.Import) for a in n.names}
    assert package_of(folder) in pkgs, f"{entry}: load() imports {sorted(pkgs)}, not {package_of(folder)}"


def _imported_names(tree) -> list:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
    return out


def _imported_by_string(tree) -> list:
    """Module names given as strings to importlib.import_module,
    pytest.importorskip or xbench_py.types.load_module."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if fname in ("import_module", "importorskip", "load_module", "__import__"):
                out.append((node.lineno, node.args[0].value))
    return out


def _path_edits(tree) -> list:
    """Each statement that changes sys.path. Its text is unparsed from the
    tree: ast.get_source_segment splits the whole file again for every
    statement, quadratic in the file's length."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Expr, ast.Assign, ast.AugAssign)):
            text = ast.unparse(node)
            if "sys.path" in text and ("insert" in text or "append" in text or "extend" in text or "[:0]" in text
                                       or isinstance(node, (ast.Assign, ast.AugAssign))):
                out.append((node.lineno, node))
    return out


def test_no_bare_or_flat_backend_imports():
    bad = []
    for path in python_files():
        try:
            source = open(path, encoding="utf-8").read()
            tree = ast.parse(source)
        except (SyntaxError, UnicodeDecodeError):
            continue
        rel = os.path.relpath(path, ROOT)
        for line, name in _imported_names(tree):
            top = name.split(".")[0]
            if top in BARE or top in LEGACY:
                bad.append(f"{rel}:{line} imports {name!r} (a backend module: import it from its package xbench_<name>)")
        for line, name in _imported_by_string(tree):
            top = name.split(".")[0]
            if top in BARE or top in LEGACY:
                bad.append(f"{rel}:{line} imports {name!r} by string (name it by its package: xbench_<name>.{name})")
        for line, node in _path_edits(tree):
            folders = {c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and c.value in PLUGIN_DIRS}
            if folders:
                bad.append(f"{rel}:{line} puts plugin folder(s) {sorted(folders)} on sys.path (put plugins/_python only)")
    assert not bad, "\n".join(bad)


def test_packages_do_not_shadow_each_other(monkeypatch):
    """Every module of every backend package, imported in this interpreter,
    is the file its name says: nothing found by path order."""
    try:
        import torch

        gpu = torch.cuda.is_available()
    except ImportError:
        gpu = False
    if not gpu and "TRITON_INTERPRET" not in os.environ:
        # the triton kernels are defined at import: interpreted without a GPU,
        # as benchmark.py settles it (and the conformance suite's load())
        monkeypatch.setenv("TRITON_INTERPRET", "1")
    for pkg in PACKAGES:
        for mod in [pkg] + [f"{pkg}.{m}" for m in modules_of(pkg)]:
            importlib.import_module(mod)
    wrong = []
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if not f or not os.path.abspath(f).startswith(PYDIR + os.sep):
            continue
        rel = os.path.relpath(os.path.abspath(f), PYDIR)
        if rel.startswith("tests" + os.sep):
            continue
        want = rel[:-3].replace(os.sep, ".")
        want = want[: -len(".__init__")] if want.endswith(".__init__") else want
        if name != want:
            wrong.append(f"module {name!r} is {rel} (should be imported as {want!r})")
    assert not wrong, "\n".join(wrong)
    loaded = {n for n in sys.modules if n.split(".")[0] in PACKAGES}
    assert {f"{p}.backend" for p in PACKAGES} <= loaded
