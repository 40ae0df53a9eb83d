"""Keys of a stack file's `config:` that render would skip in silence though they look meant for it: a key with no
namespace, or one whose namespace misspells this project's."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from components.errors import Issue
from components.models import CONFIG_NAMESPACE


def stray(keys: Iterable[object]) -> list[Issue]:
    """An issue for each config key that is not `<namespace>:<name>`, or whose namespace is a near miss of ours
    (other projects' and providers' keys, such as `aws:region`, are left alone)."""
    issues = []
    for key in keys:
        text = str(key)
        namespace, colon, name = text.partition(":")
        if not (colon and namespace and name):
            meant = f"{CONFIG_NAMESPACE}:{name or namespace}"
            issues.append(
                Issue(
                    text,
                    f"a config key is <namespace>:<name>, and render reads only this project's: "
                    f"did you mean '{meant}'?",
                )
            )
        elif namespace != CONFIG_NAMESPACE and difflib.get_close_matches(namespace, [CONFIG_NAMESPACE], cutoff=0.8):
            issues.append(
                Issue(
                    text,
                    f"'{namespace}' is not this project's namespace, so render would skip the key: "
                    f"did you mean '{CONFIG_NAMESPACE}:{name}'?",
                )
            )
    return issues
