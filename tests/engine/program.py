"""Run a copy of the stack program on the real Pulumi engine, as `pulumi <op> -s STACK` would, and print what
the engine did as JSON.

    python tests/engine/program.py WORKDIR STACK preview|up|destroy [--policy-pack PATH]... [--expect-no-changes]

WORKDIR holds the program (Pulumi.yaml, __main__.py, stacks/, components/) and its Pulumi.<STACK>.yaml. The
Python language host (pulumi-language-python) cannot be built from the Go module proxy, so the program runs
through the Automation API's own language server in this process (the engine's `--client` path), which runs
__main__.py exactly as the language host's exec script would; everything else is the real CLI, engine,
providers and backend, found on PATH and in the PULUMI_* environment. Runs in a process of its own, with
WORKDIR first on sys.path, so the program imports its own `stacks` and `components`.
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
from pathlib import Path
from typing import Any

import yaml
from pulumi import automation as auto


def _program(workdir: Path) -> Any:
    def run() -> None:
        runpy.run_path(str(workdir / "__main__.py"), run_name="__main__")

    return run


def main(argv: list[str]) -> int:
    """Run one operation and print {"ok", "steps", "summary", "outputs", "error"} as JSON on stdout."""
    parser = argparse.ArgumentParser()
    parser.add_argument("workdir", type=Path)
    parser.add_argument("stack")
    parser.add_argument("op", choices=("preview", "up", "destroy"))
    parser.add_argument("--policy-pack", action="append", default=[])
    parser.add_argument("--policy-pack-config", action="append", default=[])
    parser.add_argument("--expect-no-changes", action="store_true")
    parser.add_argument("--exclude-protected", action="store_true")
    args = parser.parse_args(argv)
    workdir = args.workdir.resolve()
    sys.path.insert(0, str(workdir))
    project = yaml.safe_load((workdir / "Pulumi.yaml").read_text())["name"]
    stack = auto.create_or_select_stack(
        stack_name=args.stack,
        project_name=project,
        program=_program(workdir),
        opts=auto.LocalWorkspaceOptions(work_dir=str(workdir)),
    )
    steps: list[dict[str, Any]] = []

    def on_event(event: auto.EngineEvent) -> None:
        meta = event.resource_pre_event.metadata if event.resource_pre_event else None
        if meta is not None and meta.op != auto.OpType.SAME:
            steps.append({"op": meta.op.value, "urn": meta.urn, "type": meta.type, "diffs": meta.diffs or []})

    log: list[str] = []
    result: dict[str, Any] = {"ok": True, "steps": steps, "summary": {}, "outputs": {}, "error": ""}
    review = {
        "on_event": on_event,
        "on_output": log.append,
        "policy_packs": args.policy_pack,
        "policy_pack_configs": args.policy_pack_config,
        "expect_no_changes": args.expect_no_changes,
    }
    try:
        if args.op == "preview":
            preview = stack.preview(**review)
            result["summary"] = {k.value if hasattr(k, "value") else k: v for k, v in preview.change_summary.items()}
        elif args.op == "up":
            up = stack.up(**review)
            result["summary"] = dict(up.summary.resource_changes or {})
            result["outputs"] = {k: ("[secret]" if v.secret else v.value) for k, v in stack.outputs().items()}
        else:
            down = stack.destroy(on_event=on_event, on_output=log.append, exclude_protected=args.exclude_protected)
            result["summary"] = dict(down.summary.resource_changes or {})
    except auto.CommandError as exc:
        result.update(ok=False, error=str(exc))
    result["log"] = "".join(f"{line}\n" for line in log)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
