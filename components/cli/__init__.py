"""`python -m components render`: the stack's objects, offline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from components.errors import ConfigError
from components.render import render, write
from components.validation import resolve_file


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = argparse.ArgumentParser(prog="python -m components", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    render_cmd = commands.add_parser("render", help="validate a stack and write every object it creates as YAML")
    source = render_cmd.add_mutually_exclusive_group()
    source.add_argument("--stack", "-s", default="dev", help="read Pulumi.<stack>.yaml (default: dev)")
    source.add_argument("--config", type=Path, help="read this stack file instead")
    render_cmd.add_argument("--out", type=Path, help="output folder (default: rendered/<stack>)")
    args = parser.parse_args(argv)
    try:
        return _render(args)
    except ConfigError as exc:
        print(f"error: {exc}" if len(exc.issues) == 1 else f"error: {len(exc.issues)} problems\n{exc}", file=sys.stderr)
        return 1


def _render(args: argparse.Namespace) -> int:
    path = args.config or Path(f"Pulumi.{args.stack}.yaml")
    name = path.stem.removeprefix("Pulumi.") if args.config else args.stack
    out = args.out or Path("rendered") / name
    rendered = render(resolve_file(path))
    files = write(rendered, out)
    print(rendered.summary())
    print(f"wrote {len(files)} files to {out}/")
    return 0
