"""The reader of Volcano's chart templates (components/simulate/volcano.py): the constructs it evaluates, and a
refusal of any other. Runs without Go or a cluster."""

from __future__ import annotations

import pytest

from components.simulate.volcano import ChartError, render_template

TEMPLATE = """\
{{- if .Values.custom.on }}
{{- if .Values.custom.admissions | regexMatch "/queues/mutate" }}
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: {{ .Release.Name }}-queues-mutate
  {{- if .Values.custom.labels }}
  labels:
    {{- toYaml .Values.custom.labels | nindent 4 }}
  {{- end }}
webhooks:
  - name: mutatequeue.example
    clientConfig:
      service:
        namespace: {{ .Release.Namespace }}
        path: /queues/mutate
{{- end }}
{{- if .Values.custom.admissions | regexMatch "/pods/mutate" }}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: {{ .Release.Name }}-pods-mutate
{{- end }}
{{- end }}
"""


def _scope(**custom: object) -> dict[str, object]:
    return {"Values": {"custom": {"on": True, **custom}}, "Release": {"Name": "volcano", "Namespace": "vs"}}


def test_only_the_enabled_documents_are_rendered_with_the_release_filled_in() -> None:
    [doc] = render_template(TEMPLATE, _scope(admissions="/jobs/mutate,/queues/mutate"))
    assert doc["metadata"] == {"name": "volcano-queues-mutate"}
    assert doc["webhooks"][0]["clientConfig"]["service"] == {"namespace": "vs", "path": "/queues/mutate"}


def test_to_yaml_is_indented_under_its_key() -> None:
    [doc] = render_template(TEMPLATE, _scope(admissions="/queues/mutate", labels={"a": "b", "c": "d"}))
    assert doc["metadata"]["labels"] == {"a": "b", "c": "d"}


def test_nothing_when_the_outer_condition_is_off() -> None:
    assert render_template(TEMPLATE, {"Values": {"custom": {"admissions": "/queues/mutate"}}, "Release": {}}) == []


@pytest.mark.parametrize("action", ['{{ include "x" . }}', "{{ $name := .Values.x }}", "{{ .Values.x | quote }}"])
def test_any_other_construct_is_refused(action: str) -> None:
    with pytest.raises(ChartError):
        render_template(f"kind: ConfigMap\nmetadata:\n  name: {action}\n", _scope())
