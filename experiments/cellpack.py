"""Reads a study's cells, loose or packed: the Python twin of experiments/cell_pack.h.

A study folder DIR holds its cells as files in DIR/cells/ and, once packed
(`aware reproduce --pack`, or `python3 experiments/cellpack.py pack DIR/cells`),
in DIR/cells.pack.json.gz, gzip-compressed JSON: {"format": "aware-cells-pack",
"version": 1, "files": {"NAME": "TEXT", ...}}. A loose file wins over its packed copy.

  python3 experiments/cellpack.py pack|unpack CELL_DIR
"""
import fnmatch
import gzip
import json
import os
import sys
import tempfile

FORMAT = "aware-cells-pack"


def pack_path(cell_dir):
    return os.path.join(os.path.dirname(os.path.abspath(cell_dir)), "cells.pack.json.gz")


def _read_pack(cell_dir):
    path = pack_path(cell_dir)
    if not os.path.exists(path):
        return {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("files"), dict):
        raise ValueError(f"{path}: not a cells pack (field 'format' must be \"{FORMAT}\")")
    return doc["files"]


class CellFiles:
    """The files of one cells folder, loose or packed (the pack read once)."""

    def __init__(self, cell_dir):
        self.cell_dir = cell_dir
        self.packed = _read_pack(cell_dir)

    def read(self, name):
        loose = os.path.join(self.cell_dir, name)
        if os.path.exists(loose):
            with open(loose, encoding="utf-8") as f:
                return f.read()
        return self.packed.get(name)

    def has(self, name):
        return os.path.exists(os.path.join(self.cell_dir, name)) or name in self.packed

    def names(self, pattern="*"):
        loose = os.listdir(self.cell_dir) if os.path.isdir(self.cell_dir) else []
        return sorted(n for n in set(loose) | set(self.packed) if fnmatch.fnmatch(n, pattern))


def _write(path, text, compress=False):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".pack-")
    with os.fdopen(fd, "wb") as f:
        data = text.encode("utf-8")
        f.write(gzip.compress(data, compresslevel=9, mtime=0) if compress else data)
    os.replace(tmp, path)


def pack(cell_dir):
    files = dict(_read_pack(cell_dir))
    moved = []
    for name in sorted(os.listdir(cell_dir)):
        path = os.path.join(cell_dir, name)
        if name.startswith(".") or not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            continue  # binary (a policy): stays loose
        if "\0" in text:
            continue
        files[name] = text
        moved.append(path)
    _write(pack_path(cell_dir), json.dumps({"format": FORMAT, "version": 1, "files": files},
                                           indent=0, sort_keys=True) + "\n", compress=True)
    for path in moved:
        os.remove(path)
    return len(moved)


def unpack(cell_dir):
    files = _read_pack(cell_dir)
    os.makedirs(cell_dir, exist_ok=True)
    written = 0
    for name, text in files.items():
        path = os.path.join(cell_dir, name)
        if not os.path.exists(path):
            _write(path, text)
            written += 1
    os.remove(pack_path(cell_dir))
    return written


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("pack", "unpack"):
        sys.exit("usage: cellpack.py pack|unpack CELL_DIR")
    n = (pack if sys.argv[1] == "pack" else unpack)(sys.argv[2])
    print(f"{sys.argv[1]}ed {n} files ({pack_path(sys.argv[2])})")
