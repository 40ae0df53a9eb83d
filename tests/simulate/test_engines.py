"""Engine builds: build tags are part of what a build depends on, and reach `go build`; how the compiler runs."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

from components.simulate import engines


def test_promtool_is_built_without_the_service_discovery_plugins() -> None:
    assert engines.PROMTOOL.tags == ("remove_all_sd",)
    assert engines._build_flags(engines.PROMTOOL)[-2:] == ["-tags", "remove_all_sd"]
    assert "-tags" not in engines._build_flags(engines.KWOK), "no tags"


def test_every_engine_is_built_lean_with_its_stamp_kept() -> None:
    """No DWARF and no symbol table in any engine (they cut compile and link time); a stamp still reaches -ldflags."""
    assert engines._build_flags(engines.KWOK) == ["-gcflags=all=-dwarf=false", "-ldflags", "-s -w"]
    flags = engines._build_flags(engines.KUBERNETES)
    ldflags = flags[flags.index("-ldflags") + 1]
    assert ldflags.startswith("-s -w -X k8s.io/component-base/version.gitVersion=v1.35.")


def test_binaries_built_together_keep_the_names_we_give_them() -> None:
    """`go build -o DIR/` names a binary after its package, skipping a major-version suffix."""
    assert engines.default_name("go.etcd.io/etcd/server/v3") == "server"
    assert engines.default_name("k8s.io/kubernetes/cmd/kube-apiserver") == "kube-apiserver"
    assert engines.default_name("sigs.k8s.io/jobset") == "jobset"


@pytest.mark.skipif(shutil.which("go") is None, reason="the build key hashes the Go version")
def test_tags_change_the_build_key() -> None:
    untagged = dataclasses.replace(engines.PROMTOOL, tags=())
    assert engines.key(untagged) != engines.key(engines.PROMTOOL)


def test_the_compiler_collects_less_often_unless_the_user_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOGC", raising=False)
    assert engines._env()["GOGC"] == engines.BUILD_GOGC == "400"
    monkeypatch.setenv("GOGC", "off")
    assert engines._env()["GOGC"] == "off"
    assert engines._env()["CGO_ENABLED"] == "0", "ours still win where they must"


def test_a_module_tree_go_is_still_unzipping_is_not_read(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree is taken from the module cache only once go has extracted it whole (its zip's hash written, no
    .partial marker left): otherwise go is asked, which waits for the other extraction."""
    tree = tmp_path / "example.com" / "!some!module@v1.0.0"
    cached = tmp_path / "cache" / "download" / "example.com" / "!some!module" / "@v"
    tree.mkdir(parents=True)
    cached.mkdir(parents=True)
    (cached / "v1.0.0.info").write_text("{}")
    monkeypatch.setattr(engines, "_MODCACHE", [tmp_path])
    asked: list[list[str]] = []

    def go_answers(command: list[str], cwd: object) -> str:
        asked.append(command)
        return json.dumps({"Dir": str(tree)})

    monkeypatch.setattr(engines, "_run", go_answers)
    monkeypatch.setattr(engines, "go", lambda: "go")
    (cached / "v1.0.0.ziphash").write_text("h1:x")
    (cached / "v1.0.0.partial").write_text("")
    assert engines.download("example.com/SomeModule", "v1.0.0") == tree and len(asked) == 1, "still unzipping"
    (cached / "v1.0.0.partial").unlink()
    assert engines.download("example.com/SomeModule", "v1.0.0") == tree and len(asked) == 1, "whole: read as it is"
    (cached / "v1.0.0.ziphash").unlink()
    assert engines.download("example.com/SomeModule", "v1.0.0") == tree and len(asked) == 2, "no hash: go is asked"
