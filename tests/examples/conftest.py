"""The plugin's schema, served once for the examples' checks."""

from __future__ import annotations

from typing import Any

import pytest

from tests.provider.plugin import plugin, schema


@pytest.fixture(scope="session")
def served() -> dict[str, Any]:
    """The schema the plugin serves, started as the engine starts it (GetSchema needs no engine)."""
    with plugin("127.0.0.1:1") as stub:
        return schema(stub)
