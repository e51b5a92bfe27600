"""Every module of every backend package under plugins/_python, imported in
one interpreter, is the file its name says (none found by path order, none
under a bare name): the import check of test_backend_packages.py for a
machine without pytest (scripts/h100-py-backend-packages.sh runs it on the
GPU, where triton compiles instead of interpreting).

    python3 scripts/check_backend_packages.py cpu|cuda

Prints the packages, the modules left unchecked because a framework they
import is not installed here (named), any module that failed to import
otherwise or is misnamed, and a summary line; exit 1 on a failure or a
misnamed module.
"""
import importlib, os, sys
device = sys.argv[1]
pydir = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plugins", "_python"))
sys.path.insert(0, pydir)
if device == "cpu":
    os.environ["TRITON_INTERPRET"] = "1"  # as benchmark.py settles it without a GPU
pkgs = sorted(d for d in os.listdir(pydir) if d.startswith("xbench_") and os.path.isfile(os.path.join(pydir, d, "__init__.py")))
failed, absent = [], {}
for p in pkgs:
    for f in sorted(os.listdir(os.path.join(pydir, p))):
        if f.endswith(".py") and f != "__init__.py":
            try:
                importlib.import_module(f"{p}.{f[:-3]}")
            except ModuleNotFoundError as e:
                if e.name and not e.name.startswith("xbench_"):  # a framework this machine lacks (iree, jax, ...)
                    absent.setdefault(e.name.split(".")[0], []).append(f"{p}.{f[:-3]}")
                else:  # one of ours, not found: the failure this checks for
                    failed.append(f"{p}.{f[:-3]}: {type(e).__name__}: {e}")
            except Exception as e:
                failed.append(f"{p}.{f[:-3]}: {type(e).__name__}: {e}")
wrong, n = [], 0
for name, mod in list(sys.modules.items()):
    fn = getattr(mod, "__file__", None)
    if not fn or not os.path.abspath(fn).startswith(pydir + os.sep):
        continue
    n += 1
    want = os.path.relpath(os.path.abspath(fn), pydir)[:-3].replace(os.sep, ".").removesuffix(".__init__")
    if name != want:
        wrong.append(f"{name} is {fn}")
print(f"packages: {', '.join(pkgs)}")
for name, mods in sorted(absent.items()):
    print(f"  not installed here: {name} (not checked: {', '.join(mods)})")
for line in failed + wrong:
    print("  " + line)
print(f"packages: {n} modules, " + ("all named by their files" if not wrong else f"{len(wrong)} NOT named by their files")
      + (f"; {len(failed)} failed to import" if failed else ""))
sys.exit(1 if wrong or failed else 0)
