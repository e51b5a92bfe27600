"""Result files of a results folder for the analysis scripts, whether the
folder is on disk or packed (xbench pack): FOLDER/X.tar.gz read as the
folder, and any path into a packed campaign folder (results/<c>/...,
where results/<c>/<c>.tar.gz holds the data) read from its archive, as
the harness's readers do (harness/store/tree.go)."""

import fnmatch
import os
import tarfile


def _archive_of(folder: str):
    """(archive, member prefix) holding folder, or (None, None)."""
    cur, rest = os.path.normpath(folder), ""
    while True:
        if os.path.isfile(cur) and cur.endswith((".tar.gz", ".tgz")):
            return cur, rest
        packed = os.path.join(cur, os.path.basename(os.path.abspath(cur)) + ".tar.gz")
        if os.path.isdir(cur) and os.path.isfile(packed):
            return packed, rest
        parent = os.path.dirname(cur)
        if parent in ("", cur):
            return None, None
        rest = os.path.join(os.path.basename(cur), rest) if rest else os.path.basename(cur)
        cur = parent


def result_files(folder: str, pattern: str):
    """Yields (path, bytes) of the regular files under folder whose path
    relative to it matches pattern (fnmatch, "/"-separated, e.g.
    "*.json" or "*/round*/*/*.json"); path is folder joined with it."""
    archive, prefix = _archive_of(folder)
    if archive is None:
        import glob
        for p in sorted(glob.glob(os.path.join(folder, pattern))):
            if os.path.isfile(p):
                with open(p, "rb") as f:
                    yield p, f.read()
        return
    prefix = prefix.replace(os.sep, "/").strip("/")
    with tarfile.open(archive, "r:gz") as tf:
        for m in sorted(tf.getmembers(), key=lambda m: m.name):
            name = m.name.removeprefix("./")
            if not m.isreg() or prefix and not name.startswith(prefix + "/"):
                continue
            rel = name[len(prefix) + 1:] if prefix else name
            # fnmatch's * crosses "/": match segment by segment.
            parts, pats = rel.split("/"), pattern.split("/")
            if len(parts) == len(pats) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, pats)):
                yield os.path.join(folder, rel), tf.extractfile(m).read()
