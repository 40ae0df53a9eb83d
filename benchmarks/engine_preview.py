"""`pulumi preview` of a 500-job stack on the real Pulumi engine: our components against a flat program registering
the same Kubernetes objects, both previewed against a simulated cluster (the user's number for the component
layer's overhead; `run.py --only program` measures the same under Pulumi's mocks).

    python benchmarks/engine_preview.py [--jobs 500] [--repeats 2]

The engines (the Pulumi CLI and the Kubernetes provider) and the cluster are `simulate`'s (components/simulate):
built once into the cache, the cluster started for the run with the stack's CRDs and controllers and none of its
objects. Each preview runs in a fresh process through the Automation API (the Python language host cannot be built
here, so the program runs in the driver's own language server, as tests/engine/program.py does), on a fresh local
backend, with the default Kubernetes provider pointed at the cluster by KUBECONFIG. Times are wall seconds of
`stack.preview()`, best of the repeats.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

DRIVER = r"""
import json, sys, time
sys.path.insert(0, {repo!r}); sys.path.insert(0, {repo!r} + "/benchmarks")
import pulumi
from pulumi import automation as auto
from stacks import stack
from components.config import parse_stack
from components.resolution import resolve
from components.manifests import platform, trainingjob
from components.kubernetes.objects import kube_object, logical_name
resolved = resolve(parse_stack(stack({jobs}, pools=8)))
from components import collector
collector.tune()  # as the stack's program (__main__.py) runs, for both programs

def program():
    if "{mode}" == "components":
        from components.kubernetes.platformobjects import PlatformObjects
        from components.kubernetes.trainingjob import TrainingJob
        objects = PlatformObjects("platform", resolved)
        for plan in resolved.jobs:
            # As Platform wires it (and run.py's program): each job waits for the objects it uses.
            TrainingJob(f"{{plan.namespace}}-{{plan.name}}", plan.spec, pool=plan.pool, scheduler=resolved.scheduler,
                        queue="research", opts=pulumi.ResourceOptions(depends_on=objects.uses(plan)))
    else:
        for obj in platform.objects(resolved) + [o for plan in resolved.jobs for o in trainingjob.objects(plan)]:
            kube_object(logical_name(obj), obj)

stack_ = auto.create_or_select_stack(stack_name="bench", project_name="gpu-training-bench", program=program,
                                     opts=auto.LocalWorkspaceOptions(work_dir={work!r}))
t0 = time.perf_counter()
preview = stack_.preview()
t1 = time.perf_counter()
print(json.dumps({{"mode": "{mode}", "seconds": t1 - t0, "steps": sum(preview.change_summary.values())}}))
"""


def main() -> None:
    """Start the cluster, preview both programs `repeats` times each, print the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()

    from components.config import parse_stack
    from components.render import render
    from components.resolution import resolve
    from components.simulate import pulumicli, simulation
    from stacks import stack

    bin_dir = pulumicli.install(lambda message: print(message, file=sys.stderr))
    rendered = render(resolve(parse_stack(stack(args.jobs, pools=8))))
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        with simulation.running(rendered, root / "cluster", nodes_per_pool=1, with_platform=False) as cluster:
            results: dict[str, list[dict]] = {"flat": [], "components": []}
            for repeat in range(args.repeats):
                for mode, runs in results.items():
                    work = root / f"{mode}-{repeat}"
                    (work / "backend").mkdir(parents=True)
                    (work / "Pulumi.yaml").write_text("name: gpu-training-bench\nruntime: python\n")
                    env = pulumicli.environment(bin_dir, work / "home", work / "backend", "bench")
                    env["KUBECONFIG"] = str(cluster.plane.kubeconfig)
                    code = DRIVER.format(repo=str(REPO), jobs=args.jobs, mode=mode, work=str(work))
                    done = subprocess.run(
                        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
                    )
                    if done.returncode != 0:
                        raise SystemExit(f"{mode} preview failed:\n{done.stderr[-3000:]}")
                    runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    flat = min(results["flat"], key=lambda r: r["seconds"])
    ours = min(results["components"], key=lambda r: r["seconds"])
    print(f"## pulumi preview on the real engine (8 pools, {args.jobs} jobs)\n")
    print("| program | steps | seconds |\n|---|---:|---:|")
    print(f"| flat pulumi_kubernetes | {flat['steps']} | {flat['seconds']:.2f} |")
    print(f"| components (PlatformObjects, TrainingJob) | {ours['steps']} | {ours['seconds']:.2f} |")
    print(f"\noverhead: x{ours['seconds'] / flat['seconds']:.2f}")


if __name__ == "__main__":
    main()
