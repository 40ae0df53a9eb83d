"""The real Pulumi engine, built from pinned Go modules: the CLI, the Kubernetes provider and the YAML
language host, and the environment that runs them on a local file backend (no Pulumi service, no plugin
downloads)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

from components.simulate import engines

CLI = engines.Engine(
    "pulumi",
    {"pulumi": "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"},
    stamp="github.com/pulumi/pulumi/pkg/v3",
    stamp_vars=(("github.com/pulumi/pulumi/sdk/v3/go/common/version.Version", "{version}"),),
)
"""The Pulumi CLI and its deployment engine."""
KUBERNETES = engines.Engine(
    "pulumi-kubernetes",
    {"pulumi-resource-kubernetes": "github.com/pulumi/pulumi-kubernetes/provider/v4/cmd/pulumi-resource-kubernetes"},
    stamp="github.com/pulumi/pulumi-kubernetes/provider/v4",
    stamp_vars=(("github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version", "4.25.0"),),
    generated=("pulumi-resource-kubernetes",),
)
"""The Kubernetes provider. The module proxy serves its v4.25.0 release only by the commit's pseudo-version
(v4.0.0-20260115033456-f47bc2d6f199, which `git describe` names v4.25.0), so the version it reports is given
here. Its main package embeds its Pulumi schema, which the release build stamps with that version first. It keeps
the pulumi/pkg/v3 v3.215.0 its release requires: at the CLI's v3.274.1, which would let the two builds share
compiled packages, it does not compile (codegen/schema's ResourceSpec changed)."""

CODEGEN = engines.Engine("pulumi-codegen", {"pulumi-codegen": "gpu-training/engines/pulumi-codegen"})
"""Pulumi's SDK generators for Node.js, Python and Go at the CLI's version, run by a main package of ours
(engines/pulumi-codegen/main.go) as the language hosts run them for `pulumi package add`: the hosts themselves
are not served by the module proxy, so `pulumi package add` and `gen-sdk` cannot run here."""

YAML = engines.Engine(
    "pulumi-yaml",
    {"pulumi-language-yaml": "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml"},
    stamp="github.com/pulumi/pulumi-yaml",
    stamp_vars=(("github.com/pulumi/pulumi-yaml/pkg/version.Version", "{version}"),),
)
"""The YAML language host: v1.25.0 is the newest release the module proxy serves."""

ENGINES = (CLI, KUBERNETES, YAML)


def install(progress: Callable[[str], None] = lambda _: None) -> Path:
    """A folder holding `pulumi` and every provider we build, each built into the cache first if need be."""
    binaries = {name: path for engine in ENGINES for name, path in engines.build(engine, progress).items()}
    digest = hashlib.sha256("".join(str(p) for p in binaries.values()).encode()).hexdigest()[:12]
    folder = engines.cache_dir() / "engines" / f"pulumi-bin-{digest}"
    if not all((folder / name).exists() for name in binaries):
        folder.mkdir(parents=True, exist_ok=True)
        for name, path in binaries.items():
            link = folder / name
            link.unlink(missing_ok=True)
            link.symlink_to(path)
    return folder


def environment(bin_dir: Path, home: Path, backend: Path, passphrase: str) -> dict[str, str]:
    """Our environment with the engines in `bin_dir` first on PATH, state in a local file backend, and secrets
    encrypted with `passphrase`. The engine uses the provider binaries it finds on PATH (ambient plugins) and
    is told never to download one."""
    return {
        **engines.GO_RUNTIME,
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PULUMI_HOME": str(home),
        "PULUMI_BACKEND_URL": backend.resolve().as_uri(),
        "PULUMI_CONFIG_PASSPHRASE": passphrase,
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_SKIP_CONFIRMATIONS": "true",
    }
