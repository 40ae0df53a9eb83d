"""Credentials written into manifests in plain text: a container's env values and command line, a ConfigMap's
data, annotations, and a Secret's values in a manifest file. Whoever reads the object (or the folder, or the
state) reads them."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any

from components.credentials import Verdict, in_words, judge
from components.rules.commands import command_line
from components.rules.pods import templates
from components.rules.rule import Advice, Rule, Settings
from components.rules.subject import Subject


def _say(where: str, verdict: Verdict) -> str | None:
    """A finding: mandatory for a credential's shape, advice for a literal under a credential's name."""
    if verdict.level != "error":
        return None  # a placeholder gives nothing away
    if verdict.what.startswith("a plain value"):
        return Advice(f"{where}: {verdict.what} is a literal; a credential there is readable by anyone who reads it")
    return f"{where}: {verdict.what} in plain text"


def _strings(data: Any) -> Iterator[tuple[str, str]]:
    """A map's string values by key."""
    if isinstance(data, dict):
        yield from ((str(k), v) for k, v in data.items() if isinstance(v, str))


def _decoded(value: str) -> str:
    """A Secret's `data` value decoded (as it is when it is not base64)."""
    try:
        return base64.b64decode(value, validate=True).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return value


def literal_credentials(subject: Subject, subjects: list[Subject], _: Settings) -> Iterator[str]:
    """No credential is written in plain text into a manifest: env values, command and args, ConfigMap data and
    annotations hold none (a token's shape: mandatory; a literal under a credential's name: advice), and no Secret's
    values sit in a manifest file."""
    found: list[str | None] = []
    for t in templates(subject.data, subjects):
        for c in t.containers:
            where = f"{t.role}/{c.get('name')}"
            found += [_say(f"{where}: env {name}", v) for name, value in t.env(c).items() if (v := judge(name, value))]
            found += [_say(f"{where}: command/args ({label})", v) for _, label, v in in_words(command_line(c).words)]
    metadata = subject.data.get("metadata") if isinstance(subject.data.get("metadata"), dict) else {}
    for key, value in _strings(metadata.get("annotations")):
        if verdict := judge(key, value):
            found.append(_say(f"annotation {key}", verdict))
    if subject.kind == "ConfigMap":
        # A file's contents (a script, a DeepSpeed config) are read for a token's shape, not for names in them.
        for key, value in _strings(subject.data.get("data")):
            if verdict := judge(key if "." not in key else None, value):
                found.append(_say(f"data {key}", verdict))
    if subject.kind == "Secret" and subject.urn is None:
        # In a preview the provider keeps a Secret's values secret in the state; a manifest file keeps them in clear.
        for field, decode in (("stringData", False), ("data", True)):
            for key, value in _strings(subject.data.get(field)):
                text = _decoded(value) if decode else value
                if not text.strip():
                    continue
                verdict = judge(None, text)
                if verdict is not None and verdict.level == "error":
                    found.append(f"{field} {key}: {verdict.what}, in a manifest file")
                else:
                    found.append(Advice(f"{field} {key}: a Secret's value, in a manifest file"))
    yield from (f for f in found if f is not None)


RULES: tuple[Rule, ...] = (
    Rule(
        "literal-credentials",
        "critical",
        "mandatory",
        (literal_credentials.__doc__ or "").strip(),
        "rotate the credential, then keep it in a Secret the manifest references: env valueFrom.secretKeyRef (the "
        "command reads $(VAR)), made by `pulumi config set --secret` (the stack makes the Secret), kubectl create "
        "secret or an external secrets operator, never in the manifest's files",
        ("*",),
        literal_credentials,
        gpu_only=False,
    ),
)
