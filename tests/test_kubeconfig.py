"""Kubeconfigs: the API server a kubeconfig that manages a cluster points at, and the token kubeconfig MultiKueue
reaches a worker with, which holds what Kueue v0.19.2 accepts and nothing it refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from components.aws.kubeconfig import kubeconfig as eks_kubeconfig
from components.kubeconfig import endpoint, is_contents, read, token_kubeconfig

TWO = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [
        {"name": "a", "cluster": {"server": "https://a.example.com", "certificate-authority-data": "QUE="}},
        {"name": "b", "cluster": {"server": "https://10.0.0.2:6443"}},
    ],
    "contexts": [{"name": "ca", "context": {"cluster": "a"}}, {"name": "cb", "context": {"cluster": "b"}}],
    "current-context": "ca",
}


def test_an_eks_kubeconfig_gives_its_endpoint_and_ca() -> None:
    found = endpoint(eks_kubeconfig("train", "https://ABC.gr7.us-east-1.eks.amazonaws.com", "Q0E=", "us-east-1"))
    assert (found.server, found.ca_data) == ("https://ABC.gr7.us-east-1.eks.amazonaws.com", "Q0E=")


def test_the_current_context_or_a_named_one_picks_the_cluster() -> None:
    text = yaml.safe_dump(TWO)
    assert endpoint(text).server == "https://a.example.com"
    chosen = endpoint(text, "cb")
    assert (chosen.server, chosen.ca_data) == ("https://10.0.0.2:6443", None)
    with pytest.raises(ValueError, match="no context 'cc'"):
        endpoint(text, "cc")


def test_a_kubeconfig_file_is_read_by_its_path(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(json.dumps(TWO))
    assert not is_contents(str(path)) and endpoint(str(path)).server == "https://a.example.com"
    with pytest.raises(ValueError, match="cannot be read"):
        read(str(tmp_path / "missing"))


def test_what_is_no_kubeconfig_says_so() -> None:
    with pytest.raises(ValueError, match="not a mapping"):
        read("- a\n- b\n")
    with pytest.raises(ValueError, match="no current-context"):
        endpoint(yaml.safe_dump({**TWO, "current-context": None}))


@given(
    token=st.from_regex(r"[A-Za-z0-9._-]{10,60}", fullmatch=True),
    host=st.from_regex(r"[a-z][a-z0-9-]{0,20}\.example\.com", fullmatch=True),
)
def test_the_token_kubeconfig_is_what_kueue_accepts(token: str, host: str) -> None:
    # pkg/controller/admissionchecks/multikueue/multikueuecluster.go:958-1040: a bearer token, CA data, TLS verified,
    # no token file, exec plugin, auth provider or basic auth.
    config = yaml.safe_load(token_kubeconfig("w", f"https://{host}", "Q0E=", token, "mk"))
    (user,) = config["users"]
    assert user["user"] == {"token": token}
    (cluster,) = config["clusters"]
    assert cluster["cluster"] == {"server": f"https://{host}", "certificate-authority-data": "Q0E="}
    assert config["current-context"] == "w" and config["contexts"][0]["context"] == {"cluster": "w", "user": "mk"}
    found = endpoint(token_kubeconfig("w", f"https://{host}", "Q0E=", token, "mk"))
    assert found.server == f"https://{host}"


@pytest.mark.parametrize("path", ["kind.yaml", "clusters/dev/kubeconfig", "kind-config", "apiVersion: v1"])
def test_a_path_that_begins_like_a_key_is_still_a_path(path: str) -> None:
    # Contents begin with a top-level key and its colon, or hold a line break; a relative path may begin with a word.
    assert is_contents(path) == path.startswith("apiVersion")
    assert is_contents("kind: Config\nclusters: []") and is_contents("clusters: []") and is_contents("{}")
