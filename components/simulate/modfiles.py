"""YAML files of the Go module cache (CRDs, overlays, charts), parsed once per machine.

The module cache never changes a file of a module version, and reading the add-ons' CRDs and overlays is most of a
simulation's start-up in Python (libyaml's parser, PyYAML's constructor: 3.5 MB of CRDs take 2-4 s). So each file's
documents are kept as JSON in the cache beside the engines, keyed by the file's path, size and modification time,
and read from there (about ten times faster) on every later run.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from components import yamlio
from components.simulate import engines


def documents(path: Path) -> list[Any]:
    """Every non-empty YAML document of `path` (a file in the module cache), from the parsed copy when there is
    one; each call returns objects of its own."""
    stat = path.stat()
    key = f"{path.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}"
    kept = engines.cache_dir() / "parsed" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
    try:
        return list(json.loads(kept.read_bytes()))
    except (OSError, ValueError):
        pass
    docs = yamlio.documents(path.read_text())
    try:
        text = json.dumps(docs)
    except (TypeError, ValueError):
        return docs  # a YAML timestamp or the like: JSON cannot keep it, so it is parsed every time
    if json.loads(text) != docs:  # non-string keys would come back as strings
        return docs
    kept.parent.mkdir(parents=True, exist_ok=True)
    fd, scratch = tempfile.mkstemp(dir=kept.parent, prefix=".parsed-")
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(scratch, kept)
    return docs


def load(path: Path) -> Any:
    """The first YAML document of `path` (a file in the module cache), None when it has none."""
    found = documents(path)
    return found[0] if found else None
