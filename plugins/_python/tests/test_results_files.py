"""scripts/results_files.py: the analysis scripts read a campaign folder,
its archive, and the old paths into a packed campaign alike."""

import importlib.util
import os
import tarfile

import pytest

spec = importlib.util.spec_from_file_location(
    "results_files", os.path.join(os.path.dirname(__file__), "..", "..", "..", "scripts", "results_files.py"))
rf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rf)

FILES = {"a/round1/x/r.json": b'{"n": 1}', "a/round2/x/r.json": b'{"n": 2}', "b/s.json": b'{"n": 3}', "b/_plan.json": b"{}",
         "b/log.txt": b"log"}


@pytest.fixture
def campaigns(tmp_path):
    plain, packed = tmp_path / "plain" / "camp", tmp_path / "packed" / "camp"
    for rel, data in FILES.items():
        (plain / rel).parent.mkdir(parents=True, exist_ok=True)
        (plain / rel).write_bytes(data)
    packed.mkdir(parents=True)
    with tarfile.open(packed / "camp.tar.gz", "w:gz") as tf:
        for rel in FILES:
            tf.add(plain / rel, arcname=rel)
    return str(plain), str(packed)


@pytest.mark.parametrize("sub,pattern,want", [
    ("", "*/round*/*/*.json", [b'{"n": 1}', b'{"n": 2}']),
    ("b", "*.json", [b"{}", b'{"n": 3}']),
    ("a/round2", "*/*.json", [b'{"n": 2}']),
])
def test_packed_reads_as_folder(campaigns, sub, pattern, want):
    plain, packed = campaigns
    for root in (plain, packed, os.path.join(packed, "camp.tar.gz")):
        folder = os.path.join(root, sub) if sub else root
        got = list(rf.result_files(folder, pattern))
        assert [data for _, data in got] == want, (folder, got)
        # Paths are the folder's own, so a script names files as before.
        assert all(p.startswith(folder + os.sep) for p, _ in got), got
