"""The GKE kubeconfig: one cluster, context and user, authenticated by gke-gcloud-auth-plugin."""

from __future__ import annotations

import yaml

from components.gcp.kubeconfig import kubeconfig


def test_the_kubeconfig_names_one_cluster_context_and_user() -> None:
    document = yaml.safe_load(kubeconfig("gke_p_us-central1_train", "203.0.113.10", "Q0VSVA=="))

    assert document["apiVersion"] == "v1" and document["kind"] == "Config"
    assert document["current-context"] == "gke_p_us-central1_train"
    [cluster] = document["clusters"]
    assert cluster == {
        "name": "gke_p_us-central1_train",
        "cluster": {"server": "https://203.0.113.10", "certificate-authority-data": "Q0VSVA=="},
    }
    [context] = document["contexts"]
    assert context["context"] == {"cluster": "gke_p_us-central1_train", "user": "gke_p_us-central1_train"}
    assert [u["name"] for u in document["users"]] == ["gke_p_us-central1_train"]


def test_the_user_authenticates_with_the_gke_auth_plugin_and_holds_no_credential() -> None:
    document = yaml.safe_load(kubeconfig("train", "203.0.113.10", "Q0VSVA=="))

    user = document["users"][0]["user"]
    assert set(user) == {"exec"}, "no token, password or client certificate in the file"
    assert user["exec"]["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    assert user["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert user["exec"]["provideClusterInfo"] is True
    assert "gke-gcloud-auth-plugin" in user["exec"]["installHint"]


def test_an_endpoint_given_as_a_url_is_not_prefixed_twice() -> None:
    document = yaml.safe_load(kubeconfig("train", "https://203.0.113.10", "Q0VSVA=="))

    assert document["clusters"][0]["cluster"]["server"] == "https://203.0.113.10"
