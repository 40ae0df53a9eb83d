"""Engine builds: build tags are part of what a build depends on, and reach `go build`."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from components.simulate import engines


def test_promtool_is_built_without_the_service_discovery_plugins() -> None:
    assert engines.PROMTOOL.tags == ("remove_all_sd",)
    assert engines._build_flags(engines.PROMTOOL) == ["-tags", "remove_all_sd"]
    assert engines._build_flags(engines.KWOK) == [], "no tags, no stamp: no flags"


@pytest.mark.skipif(shutil.which("go") is None, reason="the build key hashes the Go version")
def test_tags_change_the_build_key() -> None:
    untagged = dataclasses.replace(engines.PROMTOOL, tags=())
    assert engines.key(untagged) != engines.key(engines.PROMTOOL)
