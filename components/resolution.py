"""A stack file or a program's config made into a validated stack: parsed, validated, fitted with what its add-ons
leave of each node, and refused where `check` would block it."""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from components import launchers, mandatory, overhead, reserved, sealing
from components.config import parse_stack, read_stack_file
from components.errors import ConfigError, Issue
from components.models import StackConfig
from components.stack import Stack
from components.validation import validate


def resolve(config: StackConfig, secure: Collection[str] = (), deployed: launchers.Deployed | None = None) -> Stack:
    """The stack with its defaults decided, pools resolved and jobs planned; ConfigError listing every cross-object
    issue. `secure`: the config paths given as Pulumi secrets, whose values are not plain text whatever they hold.
    `deployed`: what the stack's last deployment made, whose jobs keep their kinds (components/launchers.py)."""
    if config.fleet is not None:
        raise ConfigError(
            Issue(
                "fleet",
                "makes this stack a fleet, which is read as a fleet (render, check and `pulumi up` do; "
                "docs/fleet.md), not as one cluster's stack",
            )
        )
    stack = validate(config, secure, deployed)
    # What the DaemonSets of the stack and its add-ons leave of each new node: read from the stack as it renders.
    found = reserved.issues(stack) or overhead.issues(stack)
    if found:
        raise ConfigError(found)
    return stack


def resolve_file(path: str | Path) -> Stack:
    """The validated stack of a stack file; errors name the file and line."""
    path = Path(path)
    raw, lines = read_stack_file(path)
    return resolve_raw(raw, source=str(path), lines=lines, base_dir=path.parent)


def resolve_raw(
    raw: Mapping[str, Any],
    *,
    source: str | None = None,
    lines: Mapping[str, int] | None = None,
    base_dir: Path | None = None,
    secure: Collection[str] = (),
    deployed: launchers.Deployed | None = None,
) -> Stack:
    """The validated stack of raw config keys; errors name `source` and the line when given. `secure`: config paths
    the stack file gives as Pulumi secrets where `raw` holds them decrypted (a Pulumi program's config).
    `deployed`: what the stack's last deployment made (a Pulumi program reads it from the stack's outputs)."""
    # Lines that parse_stack adds (job files) stay here; `lines` itself is read only when an error needs a line.
    lines = ChainMap({}, lines) if lines is not None else {}
    config = parse_stack(raw, source=source, lines=lines, base_dir=base_dir)
    try:
        stack = resolve(config, {*sealing.secure_keys(raw), *secure}, deployed)
        # What `check` blocks as mandatory, refused here: where a stack file becomes a stack (render, check, simulate,
        # the Pulumi program), not on every resolve of a stack made in code (a tenth of a second a stack).
        found = mandatory.issues(stack)
        if found:
            raise ConfigError(found)
    except ConfigError as exc:
        raise (exc.located(source, lines) if source else exc) from None
    return stack
