"""Manifest files as the rules read them: keys stated twice, lists, documents that are no objects, text that is
not YAML and unsubstituted templates, each said plainly; any text at all is read without raising."""

from __future__ import annotations

import string

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from components import rules
from components.rules.documents import load, variables
from components.rules.rule import Settings
from components.rules.subjects import from_objects

POD = """apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  containers:
    - name: main
      image: nvcr.io/nvidia/pytorch:25.01-py3
      resources:
        limits: {nvidia.com/gpu: 8}
      resources:
        requests: {cpu: 4}
"""


def test_a_key_stated_twice_is_noted_with_its_lines_and_found_by_the_rule() -> None:
    (document,) = load(POD).documents
    assert document.duplicates == ("`resources` (lines 9 and 11)",)
    assert document.obj["spec"]["containers"][0]["resources"] == {"requests": {"cpu": 4}}, "YAML keeps the last"
    subjects = from_objects([document.obj], duplicates=[document.duplicates])
    (finding,) = [f for f in rules.run(subjects, Settings()) if f.rule == "duplicate-keys"]
    assert finding.enforcement == "mandatory" and "`resources` (lines 9 and 11) is stated twice" in finding.message


def test_lists_are_expanded_and_documents_that_are_no_objects_are_skipped_with_their_number() -> None:
    text = "kind: ConfigMap\n---\n- a\n---\n\n---\napiVersion: v1\nkind: List\nitems:\n" + "".join(
        f"  - {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c{n}}}}}\n" for n in range(2)
    )
    found = load(text)
    assert [d.obj["metadata"]["name"] for d in found.documents] == ["c0", "c1"]
    assert found.skipped == [
        "document 1: no apiVersion and kind, not a Kubernetes object",
        "document 2: a list, not a Kubernetes object",
    ]
    assert found.error is None


def test_text_that_is_not_yaml_is_an_error_with_its_line_and_a_hint_for_templates() -> None:
    found = load("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Values.name }\n")
    assert found.error and found.error.startswith("not YAML at line 5") and "helm template" in found.error


def test_unsubstituted_templates_name_the_variable_and_where_it_is() -> None:
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "train-${RUN}"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Worker": {
                    "replicas": "$NUM_NODES",
                    "template": {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "__GPUS__"}}}]}},
                }
            }
        },
    }
    assert list(variables(job)) == [
        "${RUN} at metadata.name",
        "$NUM_NODES at spec.pytorchReplicaSpecs.Worker.replicas",
        "__GPUS__ at spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].resources.limits.nvidia.com/gpu",
    ]
    assert list(variables({"spec": {"containers": [{"env": [{"name": "A", "value": "$B"}]}]}})) == [], (
        "a variable in an env value is the env-references rule's, not a template"
    )


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=string.printable, max_size=300))
def test_any_text_is_read_without_raising(text: str) -> None:
    found = load(text)
    assert found.error is None or found.error.startswith(("not YAML", "cannot be read"))


YAML_DATA = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=8)
    | st.sampled_from(["$N", "{{ x }}", "8", "Indexed"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(YAML_DATA, max_size=3))
def test_any_yaml_documents_are_read_without_raising(documents: list[object]) -> None:
    load(yaml.safe_dump_all(documents))
