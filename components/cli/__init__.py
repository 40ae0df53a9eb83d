"""`python -m components render | check | simulate`: a stack's objects and the policy review of them, offline, and
its jobs on a simulated cluster."""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from components.config import LineIndex, read_stack_file
from components.errors import ConfigError
from components.fleetstack import is_fleet
from components.release import version
from components.render import render, write
from components.resolution import resolve_raw
from components.rules.rule import CLUSTERS


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = argparse.ArgumentParser(prog="python -m components", description=__doc__)
    parser.add_argument("--version", action="version", version=f"gpu-training {version()}")
    commands = parser.add_subparsers(dest="command")
    render_cmd = commands.add_parser("render", help="validate a stack and write every object it creates as YAML")
    source = render_cmd.add_mutually_exclusive_group()
    source.add_argument("--stack", "-s", default="dev", help="read Pulumi.<stack>.yaml (default: dev)")
    source.add_argument("--config", type=Path, help="read this stack file instead")
    render_cmd.add_argument("--out", type=Path, help="output folder (default: rendered/<stack>)")

    check_cmd = commands.add_parser("check", help="run the policy rules over a stack or rendered YAML")
    check_cmd.add_argument("paths", nargs="*", type=Path, help="YAML files or folders (e.g. rendered/dev)")
    target = check_cmd.add_mutually_exclusive_group()
    target.add_argument("--stack", "-s", help="check Pulumi.<stack>.yaml")
    target.add_argument("--config", type=Path, help="check this stack file")
    check_cmd.add_argument("--format", choices=("table", "json"), default="table", help="output (default: table)")
    check_cmd.add_argument(
        "--policy-config", type=Path, help="policy config JSON, as for pulumi preview --policy-pack-config"
    )
    check_cmd.add_argument(
        "--production",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="treat as production (default: for Pulumi.prod.yaml)",
    )
    check_cmd.add_argument(
        "--cluster",
        choices=CLUSTERS,
        help="the cluster the objects run on: EKS and GKE add the GPU toleration, GKE GPUDirect pods may use the "
        "host network (default: the stack's provider; unknown for files)",
    )
    check_cmd.add_argument(
        "--gang-scheduler",
        choices=("volcano", "kueue", "none"),
        help="the cluster's gang scheduler (default: from the stack or the rendered add-ons)",
    )
    simulate_cmd = commands.add_parser(
        "simulate",
        help="run the stack's jobs on a local control plane with its real schedulers and operators, on fake GPU nodes",
    )
    source = simulate_cmd.add_mutually_exclusive_group()
    source.add_argument("--stack", "-s", default="dev", help="read Pulumi.<stack>.yaml (default: dev)")
    source.add_argument("--config", type=Path, help="read this stack file instead")
    simulate_cmd.add_argument(
        "--nodes", type=_positive, help="fake nodes per pool (default: the pool's maxNodes, at most 64)"
    )
    simulate_cmd.add_argument(
        "--timeout", type=_positive, default=120, help="seconds each job may take to schedule (default: 120)"
    )
    simulate_cmd.add_argument(
        "--keep", action="store_true", help="leave the cluster running, every job applied, for kubectl"
    )
    simulate_cmd.add_argument("--format", choices=("table", "json"), default="table", help="output (default: table)")
    simulate_cmd.add_argument(
        "--take-away",
        metavar="WORKER",
        help="a fleet's: once its jobs run, stop this worker's cluster; its jobs must run whole on another worker",
    )
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "simulate":
            return _simulate(args)
        return _render(args) if args.command == "render" else _check(args, parser)
    except ConfigError as exc:
        print(f"error: {exc}" if len(exc.issues) == 1 else f"error: {len(exc.issues)} problems\n{exc}", file=sys.stderr)
        return 2 if args.command in ("check", "simulate") else 1
    except json.JSONDecodeError as exc:
        print(f"error: the policy config is not JSON: {exc}", file=sys.stderr)
        return 2


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not at least 1")
    return value


def _simulate(args: argparse.Namespace) -> int:
    from components.cli.simulate import simulate

    path = args.config or Path(f"Pulumi.{args.stack}.yaml")
    name = path.stem.removeprefix("Pulumi.") if args.config else args.stack
    report, code = simulate(
        path,
        name,
        nodes=args.nodes,
        timeout=args.timeout,
        keep=args.keep,
        output=args.format,
        take_away=args.take_away,
    )
    print(report, file=sys.stdout if code != 2 else sys.stderr)
    return code


def _render(args: argparse.Namespace) -> int:
    path = args.config or Path(f"Pulumi.{args.stack}.yaml")
    name = path.stem.removeprefix("Pulumi.") if args.config else args.stack
    out = args.out or Path("rendered") / name
    raw, lines = read_stack_file(path)
    if is_fleet(raw):
        return _render_fleet(raw, lines, path, out)
    with _collector_paused():
        rendered = render(resolve_raw(raw, source=str(path), lines=lines, base_dir=path.parent))
        files = write(rendered, out)
    print(rendered.summary())
    print(f"wrote {len(files)} files to {out}/")
    for pool in rendered.stack.pools.values():
        for advice in pool.rdma_advice():
            print(f"warning: {advice}", file=sys.stderr)
    for warning in rendered.warnings():
        print(f"warning: {warning}", file=sys.stderr)
    return 0


def _render_fleet(raw: dict[str, Any], lines: LineIndex, path: Path, out: Path) -> int:
    from components.fleetrender import render_fleet, write_fleet
    from components.fleetstack import resolve_fleet_raw

    with _collector_paused():
        rendered = render_fleet(resolve_fleet_raw(raw, source=str(path), lines=lines, base_dir=path.parent))
        files = write_fleet(rendered, out)
    print(rendered.summary())
    print(f"wrote {len(files)} files to {out}/")
    for warning in rendered.warnings():
        print(f"warning: {warning}", file=sys.stderr)
    return 0


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a render. A render builds millions of plain dicts, lists and strings,
    which no cycle holds (a 10,000-job render leaves ~200 objects in cycles), yet each collection walked them:
    ~15% of such a render. Afterwards what the render made is frozen (gc.freeze: left out of later collections,
    still freed when no longer referenced), or the first collection would walk all of it at once."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_on:
            gc.enable()


def _check(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from components.cli.check import check, is_stack_file

    stack = args.config or (Path(f"Pulumi.{args.stack}.yaml") if args.stack else None)
    if stack is None and not args.paths:
        parser.error("check takes --stack NAME, --config FILE, or YAML files and folders")
    if stack is not None and args.paths:
        parser.error("check takes a stack or paths, not both")
    stack_files = [p for p in args.paths if is_stack_file(p)]
    if stack_files and len(args.paths) > 1:
        parser.error(f"{stack_files[0]} is a stack file: check it alone (check --config {stack_files[0]})")
    if stack_files:  # `check Pulumi.dev.yaml`: the stack it renders, as --config reads it
        stack, args.paths = stack_files[0], []
        print(f"{stack} is a stack file: checking the objects it renders (as check --config {stack})", file=sys.stderr)
    report, errors, code = check(
        stack,
        args.paths,
        policy_config=args.policy_config,
        production=args.production,
        gang_scheduler=args.gang_scheduler,
        output=args.format,
        cluster=args.cluster,
    )
    if errors:  # what could not be read comes first: a report after it never reads as all clear
        print(errors, file=sys.stderr)
    print(report)
    return code
