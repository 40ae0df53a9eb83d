"""The real engines `simulate` runs, built once from pinned Go modules into a cache outside the repository.

Each engine is a Go module of ours under `engines/<name>/` whose go.mod pins the upstream module by its
`tool` directives and whose go.sum pins every dependency, so a build is the same on every machine. The
binaries go to `<cache>/engines/<name>-<key>/`, where the key hashes go.mod, go.sum and the Go version:
a second run finds them there and builds nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ENGINES_DIR = Path(__file__).parent / "engines"
_MODCACHE: list[Path] = []


class BuildError(RuntimeError):
    """An engine could not be built or a module could not be downloaded: the Go toolchain's own words."""


K8S_VERSION_VARS = tuple(
    (f"k8s.io/component-base/version.{name}", value)
    for name, value in (("gitVersion", "{version}"), ("gitMajor", "{major}"), ("gitMinor", "{minor}"))
)
"""Where a Kubernetes binary keeps its version."""


@dataclass(frozen=True, slots=True)
class Edit:
    """One exact change to a file of a binary's main package tree, or a new file of ours when `old` is empty."""

    binary: str
    file: str
    """The file's path under the main package's folder."""
    old: str
    new: str
    why: str

    def apply(self, tree: Path) -> None:
        """Make the change in the copied tree; BuildError when the text to change is not there exactly once (a new
        upstream version: the edit needs a look)."""
        path = tree / self.file
        if not self.old:
            path.write_text(self.new)
            return
        text = path.read_text()
        if text.count(self.old) != 1:
            raise BuildError(f"{self.file}: the edit for {self.why!r} expects {self.old!r} exactly once")
        path.write_text(text.replace(self.old, self.new))


@dataclass(frozen=True, slots=True)
class Engine:
    """A Go module of ours that pins one upstream project, and the binaries built from it."""

    name: str
    binaries: dict[str, str]
    """Binary name -> Go package (a main package listed in the module's `tool` directives, or the module's own
    main package, by its module path)."""
    stamp: str | None = None
    """A pinned module whose version the binaries report as theirs, as the upstream release build stamps it:
    built from a module, a Kubernetes server says v0.0.0-master+$Format:%H$, which clients that parse the
    server's version (Kueue) refuse, and the Pulumi CLI says it has no version at all."""
    stamp_vars: tuple[tuple[str, str], ...] = K8S_VERSION_VARS
    """The Go variables the linker sets (package.Name) and their values ({version}, {major}, {minor})."""
    generated: tuple[str, ...] = ()
    """Binaries whose main package embeds files its release build generates (`go run generate.go`, given the
    version as $VERSION), which the module zip leaves out: built from a copy of the package, generated first."""
    tags: tuple[str, ...] = ()
    """Go build tags: what the upstream build lets a smaller binary leave out (promtool's service discovery)."""
    edits: tuple[Edit, ...] = ()
    """Changes to a binary's main package (and the packages under it) where upstream hard-codes what a test run
    must choose (a fixed port): built from a copy of that package tree, edited, in a scratch module of ours."""

    @property
    def module_dir(self) -> Path:
        """The folder holding this engine's go.mod and go.sum."""
        return ENGINES_DIR / self.name


KUBERNETES = Engine(
    "kubernetes",
    {
        "etcd": "go.etcd.io/etcd/server/v3",
        "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
        "kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
        "kube-scheduler": "k8s.io/kubernetes/cmd/kube-scheduler",
    },
    stamp="k8s.io/kubernetes",
)
"""The control plane, at the Kubernetes minor our stacks default to, with the etcd that release requires."""
KUBECTL = Engine("kubectl", {"kubectl": "k8s.io/kubernetes/cmd/kubectl"}, stamp="k8s.io/kubernetes")
"""kubectl, at the control plane's release: what the node check's verdict updates nodes with, run by its test."""
KWOK = Engine("kwok", {"kwok": "sigs.k8s.io/kwok/cmd/kwok"})
"""kwok: nodes without kubelets, and pods that run on them."""
PROMTOOL = Engine(
    "promtool",
    {"promtool": "github.com/prometheus/prometheus/cmd/promtool"},
    # Prometheus's plugins/plugin_*.go are built unless `remove_all_sd` (each `//go:build !remove_all_sd ||
    # enable_<name>_sd`): without them promtool leaves out the cloud SDKs of every service discovery but the
    # file and Kubernetes ones it imports itself, which `check rules` and `test rules` never use.
    tags=("remove_all_sd",),
)
"""promtool at the Prometheus release kube-prometheus-stack runs (v3.14.0, Go module v0.314.0): lints the
observability pack's rules and runs their unit tests."""


def cache_dir() -> Path:
    """Where built engines and run folders live: $GPU_TRAINING_CACHE, else $XDG_CACHE_HOME/gpu-training."""
    if explicit := os.environ.get("GPU_TRAINING_CACHE"):
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpu-training"


def go() -> str:
    """The `go` command, or a BuildError saying how to get one."""
    found = shutil.which("go")
    if not found:
        raise BuildError("simulate builds its engines with Go >= 1.26: install Go (https://go.dev/dl) and retry")
    return found


BUILD_GOGC = "400"
"""The Go compiler's own collector during a build, unless the user's environment sets GOGC: collecting when its heap
has grown fourfold instead of doubled. kwok from an empty build cache, twice each way: 94 / 85 s wall and 152 /
139 s user at Go's default, 76 / 74 s and 119 / 116 s at 400 (about a fifth less), the largest compile ~0.5 GiB."""


def _env() -> dict[str, str]:
    # The local toolchain only (never a toolchain download), static binaries, and paths trimmed so a
    # build does not depend on where the cache lives.
    return {
        "GOGC": BUILD_GOGC,
        **os.environ,
        "GOTOOLCHAIN": "local",
        "CGO_ENABLED": "0",
        "GOFLAGS": "-trimpath -mod=readonly -buildvcs=false",
    }


GO_RUNTIME = {"GOGC": "400", "GOMEMLIMIT": "1GiB"}
"""How every engine process runs (the control plane, the operators, the Pulumi CLI and its providers) unless the
user's environment says otherwise. They live for seconds to minutes, and with Go's default (a collection each time
the heap doubles) the API server spent a sixth of its CPU collecting: at 400, `simulate --stack dev` takes 15% less
CPU (17.1 -> 14.6 s; the API server 9.9 -> 7.6 s) for 1.4 -> 1.8 GiB at its peak. Past the soft limit a process
collects as often as by default again, so no engine grows without bound."""


LEAN = ("-gcflags=all=-dwarf=false",)
"""What every engine is built with beyond its own flags: no DWARF from the compiler, and (in `_ldflags`) none from
the linker nor a symbol table (`-s -w`). The engines are test binaries: nobody debugs them, and a panic's stack
trace still names every function (that is the pclntab, which stays). Measured in docs/benchmarks.md."""


@functools.cache
def _go_version() -> str:
    out = subprocess.run([go(), "env", "GOVERSION"], capture_output=True, text=True, env=_env(), check=False)
    return out.stdout.strip()


def key(engine: Engine) -> str:
    """What a build of `engine` depends on: its go.mod, go.sum, any Go source of ours beside them (a main package
    in the module itself) and the Go version, hashed."""
    digest = hashlib.sha256(_go_version().encode())
    for name in ("go.mod", "go.sum"):
        digest.update((engine.module_dir / name).read_bytes())
    for source in sorted(engine.module_dir.glob("*.go")):  # none in a module that only pins tools: same keys
        digest.update(source.name.encode() + source.read_bytes())
    if flags := _build_flags(engine):
        digest.update(" ".join(flags).encode())
    for edit in engine.edits:
        digest.update(repr((edit.binary, edit.file, edit.old, edit.new)).encode())
    return digest.hexdigest()[:12]


def _stamps(engine: Engine) -> dict[str, str]:
    """Each Go variable the linker sets in `engine`'s binaries, with its value (none without a stamp)."""
    if engine.stamp is None:
        return {}
    version = pinned(engine, engine.stamp)
    major, minor = version.lstrip("v").split(".")[:2]
    values = {"version": version, "major": major, "minor": minor}
    return {var: value.format(**values) for var, value in engine.stamp_vars}


def _ldflags(engine: Engine) -> list[str]:
    """The linker flags: no symbol table nor DWARF, and `engine.stamp`'s pinned version stamped in (if any)."""
    stamps = _stamps(engine)
    return ["-ldflags", " ".join(["-s -w", *(f"-X {var}={value}" for var, value in stamps.items())])]


def _build_flags(engine: Engine) -> list[str]:
    """`go build`'s flags for `engine`: lean binaries, its version stamp and its build tags."""
    return [*LEAN, *_ldflags(engine), *(["-tags", ",".join(engine.tags)] if engine.tags else [])]


def install_dir(engine: Engine) -> Path:
    """The cache folder of this engine's binaries at its current pins."""
    return cache_dir() / "engines" / f"{engine.name}-{key(engine)}"


def is_built(engine: Engine) -> bool:
    """Whether every binary of `engine` at its current pins is in the cache."""
    target = install_dir(engine)
    return all((target / b).is_file() for b in engine.binaries)


def build(engine: Engine, progress: Callable[[str], None] = lambda _: None) -> dict[str, Path]:
    """The engine's binaries by name, built into the cache first when they are not there yet."""
    target = install_dir(engine)
    built = {b: target / b for b in engine.binaries}
    if all(p.is_file() for p in built.values()):
        return built
    target.parent.mkdir(parents=True, exist_ok=True)
    # One builder at a time (parallel test workers, two terminals): the others wait, then find the binaries.
    with (target.parent / f".{engine.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if all(p.is_file() for p in built.values()):
            return built
        staging = Path(tempfile.mkdtemp(prefix=f".{engine.name}-", dir=target.parent))
        try:
            copied = {*engine.generated, *(edit.binary for edit in engine.edits)}
            plain = {b: p for b, p in engine.binaries.items() if b not in copied}
            if plain:
                progress(f"building {', '.join(plain)} from {engine.name}'s pinned modules (first run only)")
                _build_together(engine, plain, staging)
            for binary in sorted(copied):
                progress(f"building {binary} from {engine.binaries[binary]} (first run only)")
                _build_copy(engine, binary, staging / binary)
            shutil.rmtree(target, ignore_errors=True)
            staging.rename(target)  # all or nothing: a half-built folder is never taken for a cache hit
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return built


def _build_together(engine: Engine, binaries: dict[str, str], staging: Path) -> None:
    """Build `binaries` (name -> main package) into `staging` in one `go build`: the packages they share compile
    once, and one binary links while the next one's packages compile."""
    if len(binaries) == 1:
        [(binary, package)] = binaries.items()
        _run([go(), "build", *_build_flags(engine), "-o", str(staging / binary), package], engine.module_dir)
        return
    names = [default_name(package) for package in binaries.values()]
    if len(set(names)) < len(names):  # two main packages of one name would overwrite each other's binary
        for binary, package in binaries.items():
            _build_together(engine, {binary: package}, staging)
        return
    out = staging / ".out"
    out.mkdir()
    _run([go(), "build", *_build_flags(engine), "-o", f"{out}{os.sep}", *binaries.values()], engine.module_dir)
    for binary, package in binaries.items():
        (out / default_name(package)).rename(staging / binary)
    out.rmdir()


def default_name(package: str) -> str:
    """The file name `go build -o DIR/` gives a main package's binary: its last path element, or the one before a
    major-version suffix (go.etcd.io/etcd/server/v3 -> server)."""
    parts = package.split("/")
    last = parts[-1]
    if len(parts) > 1 and last[:1] == "v" and last[1:].isdigit():
        return parts[-2]
    return last


def download_modules(engine: Engine) -> None:
    """Download the modules `engine`'s binaries import into the module cache: the network part of a build, which
    can run while another engine compiles. Only what the packages need, as the build itself would: a go.mod may
    require modules the proxy no longer serves (the DRA driver's go-nvfm) that none of our binaries import. A
    failure here is left for the build to report."""
    with contextlib.suppress(BuildError):
        _run([go(), "list", "-deps", "-f", "{{.ImportPath}}", *engine.binaries.values()], engine.module_dir)


def _modcache() -> Path:
    if not _MODCACHE:
        _MODCACHE.append(Path(_run([go(), "env", "GOMODCACHE"], Path.cwd()).strip()))
    return _MODCACHE[0]


def _build_copy(engine: Engine, binary: str, output: Path) -> None:
    """Build `binary` from a copy of its main package tree in a scratch module that is ours (same go.mod and
    go.sum): generated first as its release build does (`engine.generated`), or edited (`engine.edits`)."""
    package = engine.binaries[binary]
    module = max((m for m in _required(engine) if package.startswith(f"{m}/")), key=len)
    version = pinned(engine, module)
    source = download(module, version) / package.removeprefix(f"{module}/")
    with tempfile.TemporaryDirectory(prefix=f"{engine.name}-") as scratch:
        root = Path(scratch)
        for name in ("go.mod", "go.sum"):
            shutil.copyfile(engine.module_dir / name, root / name)
        copy = root / "main"
        shutil.copytree(source, copy)
        for path in [copy, *copy.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)  # the module cache is read-only
        for edit in engine.edits:
            if edit.binary == binary:
                edit.apply(copy)
        if binary in engine.generated:
            # The version the binary reports, as the linker stamps it.
            release = next(iter(_stamps(engine).values()), version)
            # Built with the engine's own flags, so the packages it shares with the binary (the Kubernetes
            # provider's generate.go imports Pulumi's codegen/schema: 631 packages) compile once, not once per flags.
            done = subprocess.run(
                [go(), "run", *_build_flags(engine), "generate.go"],
                cwd=copy,
                capture_output=True,
                text=True,
                env={**_env(), "VERSION": release},
                check=False,
            )
            if done.returncode != 0:
                raise BuildError(f"`go run generate.go` for {package} failed:\n{done.stderr.strip()[-2000:]}")
        _run([go(), "build", *_build_flags(engine), "-o", str(output), "./main"], root)


def _required(engine: Engine) -> dict[str, str]:
    """The modules `engine`'s go.mod requires, with their versions."""
    required: dict[str, str] = {}
    for line in (engine.module_dir / "go.mod").read_text().splitlines():
        words = line.removeprefix("require").split()
        if len(words) >= 2 and words[1].startswith("v") and "." in words[0]:
            required[words[0]] = words[1]
    return required


def _escaped(path: str) -> str:
    """A module path as the module cache spells it on disk (an upper-case letter becomes ! and the letter)."""
    return "".join(f"!{c.lower()}" if c.isupper() else c for c in path)


def download(module: str, version: str) -> Path:
    """The source tree of `module@version` in the Go module cache (downloaded once, checksum-verified)."""
    # A tree is read without asking go (a process per module on every run) once go has extracted it whole: as go's
    # own DownloadDir judges (cmd/go/internal/modfetch/fetch.go), the zip's hash recorded and no .partial marker,
    # which go writes before it unzips into the tree's final place and removes after. The .info file is no sign:
    # go writes it before the zip is even fetched, and a test once read a tree that prebuild was still unzipping.
    root = _modcache()
    tree = root / f"{_escaped(module)}@{version}"
    cached = root / "cache" / "download" / _escaped(module) / "@v"
    if tree.is_dir() and (cached / f"{version}.ziphash").is_file() and not (cached / f"{version}.partial").exists():
        return tree
    with tempfile.TemporaryDirectory() as scratch:
        out = _run([go(), "mod", "download", "-json", f"{module}@{version}"], Path(scratch))
    info = json.loads(out)
    if info.get("Error"):
        raise BuildError(f"{module}@{version}: {info['Error']}")
    return Path(info["Dir"])


def _run(command: list[str], cwd: Path) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=_env(), check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise BuildError(f"`{' '.join(command[1:])}` in {cwd} failed:\n{tail}")
    return done.stdout


def pinned(engine: Engine, module: str) -> str:
    """The version of `module` that `engine`'s go.mod requires."""
    if version := _required(engine).get(module):
        return version
    raise BuildError(f"{engine.name}/go.mod requires no {module}")
