"""MkDocs hooks: the configuration reference page, generated from the config models at every build."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from components.reference import reference

PAGE = "reference.md"
"""Where the generated page sits in the site; no file of that name is in docs/."""


def on_files(files: Files, config: Any) -> Files:
    """Add the reference, written from the models as they are now."""
    files.append(File.generated(config, PAGE, content=reference()))
    return files
