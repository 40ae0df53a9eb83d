"""Write `config_types.py` and `fronts.py`: the config models (components/models) as the TypedDicts and enums
the schema analyzer reads, and the components it serves as front classes over the Python components.

The component plugin's schema is inferred by `pulumi.provider.experimental` from type annotations and
from attribute docstrings found in source code, so the argument types must exist as source. This module
derives that source from the pydantic models, which stay the one place a config key is declared:

    python provider/gpu_training_plugin/generate.py          # rewrite config_types.py and fronts.py
    python provider/gpu_training_plugin/generate.py --check  # exit 1 when either is stale

Mapping: a model becomes a TypedDict of the same name whose keys are the config keys in snake_case
(the analyzer camelCases them back); a field with a default is NotRequired; a Literal of strings or
numbers becomes an Enum (named after its alias in the models, e.g. Fabric, else <Model><Field>); the
discriminated `cluster` union becomes one TypedDict with every variant's keys (required where all
variants require it); a union the schema cannot express (e.g. a list or a map) becomes Any, and the
models still validate it. Descriptions are the models' attribute docstrings, verbatim.

A front class subclasses a Python component and repeats, as source, the component's docstring and its
output annotations with their docstrings (the analyzer reads outputs and their descriptions from the
class it serves, and annotations evaluated); its `__init__` takes the TypedDict the analyzer needs and
hands the component config data (adapt.py). The components stay the one place an output is declared.
"""

from __future__ import annotations

import ast
import datetime
import inspect
import json
import re
import sys
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

OUTPUT = Path(__file__).with_name("config_types.py")
FRONTS = Path(__file__).with_name("fronts.py")

# The components' own inputs beside the TrainingJobSpec fields: (key, annotation, description).
TRAINING_JOB_EXTRAS: tuple[tuple[str, str, str], ...] = (
    (
        "pool",
        "pulumi.Input[dict[str, Any]]",
        "The pool the job runs on, as plain data: an entry of a platform's `pools` output (a Platform "
        "component's, or a platform stack's `pools` export through a StackReference). Required.",
    ),
    (
        "scheduler_type",
        "NotRequired[pulumi.Input[str]]",
        "The cluster's gang scheduler: volcano | kueue | none (a platform's `scheduler` output); the Python "
        "API's `scheduler=` keyword, renamed beside the spec's own `scheduler` (queue and priority class). "
        "Default: none.",
    ),
    (
        "default_queue",
        "NotRequired[pulumi.Input[str]]",
        "The queue when scheduler.queue names none (a platform's `defaultQueue` output); the Python API's "
        "`queue=` keyword. Default: none.",
    ),
    (
        "storage",
        "NotRequired[pulumi.Input[list[dict[str, Any]]]]",
        "The platform's declared volumes (a platform's `storage` output): a claim backed by a bucket gets what its "
        "pods need to mount it (GKE's gcsfuse sidecar for gcs). Default: none (every claim mounted as a plain claim).",
    ),
)


def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)


def _pascal(snake: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-]", snake) if part)


def _docstring(text: str | None, indent: str, *, first: bool = False) -> str:
    """A string literal whose value is exactly `text`. A class's docstring (`first`) with several lines is
    written with \\n escapes, since formatters re-indent docstrings and the analyzer keeps indentation."""
    if not text:
        return ""
    if first and "\n" in text:
        return f"{indent}{json.dumps(text)}\n"
    if '"""' in text or "\\" in text or text.endswith('"'):
        return f"{indent}{text!r}\n"
    # Continuation lines stay at column 0: the analyzer takes the literal's value verbatim.
    return f'{indent}"""{text}"""\n'


def _literal_aliases(module: types.ModuleType) -> dict[str, tuple[Any, str | None]]:
    """Module-level `Name = Literal[...]` aliases with the docstring that follows them."""
    found: dict[str, tuple[Any, str | None]] = {}
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return found
    body = tree.body
    for i, node in enumerate(body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            value = getattr(module, name, None)
            if get_origin(value) is Literal:
                doc = None
                nxt = body[i + 1] if i + 1 < len(body) else None
                constant = nxt.value if isinstance(nxt, ast.Expr) else None
                if isinstance(constant, ast.Constant) and isinstance(constant.value, str):
                    doc = inspect.cleandoc(constant.value)
                found[name] = (value, doc)
    return found


def _annotations(cls: type) -> dict[str, tuple[str, str | None]]:
    """Each class-level annotation as written in the class's source, with the docstring under it."""
    try:
        tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    out: dict[str, tuple[str, str | None]] = {}
    for node, nxt in zip(body, [*body[1:], None], strict=True):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            doc = nxt.value.value if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) else None
            out[node.target.id] = (ast.unparse(node.annotation), doc)
    return out


def _field_annotation_sources(model: type[BaseModel]) -> dict[str, str]:
    """Each field's annotation as written in the model's source (to find the alias it names)."""
    return {name: annotation for name, (annotation, _) in _annotations(model).items()}


@dataclass
class _Enum:
    name: str
    values: tuple[Any, ...]
    doc: str | None


@dataclass
class _Field:
    key: str
    annotation: str
    required: bool
    doc: str | None


@dataclass
class _TypedDict:
    name: str
    doc: str | None
    fields: list[_Field] = field(default_factory=list)
    source: str = ""
    """Where it comes from, for the generated comment."""


class Generator:
    """Walks the models from the roots and collects the TypedDicts and enums, dependencies first."""

    def __init__(self) -> None:
        self.enums: dict[str, _Enum] = {}
        self.dicts: dict[str, _TypedDict] = {}
        self.order: list[str] = []  # names of enums and TypedDicts, each after what it uses
        self._models: dict[str, type] = {}

    # -- types -----------------------------------------------------------------------------------------
    def annotation(self, tp: Any, owner: type[BaseModel], key: str, written: str) -> str:
        """The TypedDict annotation of a model field's type (without NotRequired)."""
        origin = get_origin(tp)
        if origin is Annotated:
            return self.annotation(get_args(tp)[0], owner, key, written)
        if origin in (Union, types.UnionType):
            members = [a for a in get_args(tp) if a is not type(None)]
            if len(members) == 1:
                return self.annotation(members[0], owner, key, written)
            models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
            if len(models) == len(members):
                return self.merged(models)
            return "Any"
        if tp in (str, int, float, bool):
            return tp.__name__
        if tp in (datetime.datetime, datetime.date) or (isinstance(tp, type) and issubclass(tp, datetime.datetime)):
            return "str"
        if tp is Any:
            return "Any"
        if origin is Literal:
            return self.enum(tp, owner, key, written)
        if origin in (list, typing.List, tuple):  # noqa: UP006
            (item,) = get_args(tp)[:1]
            return f"list[{self.annotation(item, owner, key, written)}]"
        if origin in (dict, typing.Dict):  # noqa: UP006
            k, v = get_args(tp)
            if k is not str:
                return "Any"
            return f"dict[str, {self.annotation(v, owner, key, written)}]"
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return self.model(tp)
        # Annotated aliases of the datetime family (AwareDatetime) arrive as their own classes.
        if getattr(tp, "__module__", "").startswith("pydantic") and "Datetime" in getattr(tp, "__name__", ""):
            return "str"
        raise TypeError(f"{owner.__name__}.{key}: no schema type for {tp!r}")

    def enum(self, tp: Any, owner: type[BaseModel], key: str, written: str) -> str:
        """The enum of a Literal: its alias in the models (Fabric), else <Model><Field>; Any when mixed."""
        values = get_args(tp)
        if not all(isinstance(v, str) for v in values) and not all(
            isinstance(v, int) and not isinstance(v, bool) for v in values
        ):
            return "Any"
        name, doc = None, None
        module = sys.modules[owner.__module__]
        for alias, (value, alias_doc) in _literal_aliases(module).items():
            if re.search(rf"\b{alias}\b", written) and get_args(value) == values:
                name, doc = alias, alias_doc
                break
        if name is None:
            for existing in self.enums.values():
                if existing.values == values:
                    return existing.name
            name = f"{owner.__name__}{_pascal(key)}"
        if name not in self.enums:
            self.enums[name] = _Enum(name, values, doc)
            self.order.append(name)
        elif self.enums[name].values != values:
            raise TypeError(f"two enums named {name} with different values")
        return name

    def model(self, model: type[BaseModel], *, name: str | None = None) -> str:
        """The TypedDict of a model (and of the models under it)."""
        name = name or model.__name__
        if name in self.dicts or name in self._models:
            if self._models.get(name, model) is not model:
                raise TypeError(f"two models named {name}")
            return name
        self._models[name] = model
        td = _TypedDict(name, inspect.cleandoc(model.__doc__) if model.__doc__ else None, source=_where(model))
        written = _field_annotation_sources(model)
        for py, info in model.model_fields.items():
            alias = info.alias or py
            td.fields.append(
                _Field(
                    key=_snake(alias),
                    annotation=self.annotation(info.annotation, model, py, written.get(py, "")),
                    required=info.is_required(),
                    doc=info.description,
                )
            )
        self.dicts[name] = td
        self.order.append(name)
        return name

    def merged(self, models: list[type[BaseModel]]) -> str:
        """One TypedDict for a discriminated union: every variant's keys, required where all require it."""
        names = [m.__name__ for m in models]
        suffix = _common_suffix(names)
        name = suffix if suffix and suffix[0].isupper() else "Or".join(names)
        if name in self.dicts:
            return name
        doc_lines = [f"One of: {', '.join(names)}, chosen by `provider`."]
        td = _TypedDict(name, None, source=", ".join(_where(m) for m in models))
        by_key: dict[str, list[tuple[type[BaseModel], _Field]]] = {}
        for model in models:
            doc_lines.append(f"{_variant(model)}: {inspect.cleandoc(model.__doc__ or '')}")
            written = _field_annotation_sources(model)
            for py, info in model.model_fields.items():
                alias = info.alias or py
                f = _Field(
                    _snake(alias),
                    "" if py == "provider" else self.annotation(info.annotation, model, py, written.get(py, "")),
                    info.is_required(),
                    info.description,
                )
                by_key.setdefault(f.key, []).append((model, f))
        td.doc = "\n".join(doc_lines)
        for key, found in by_key.items():
            annotations = {f.annotation for _, f in found}
            docs = {f.doc for _, f in found}
            one = len(docs) == 1
            doc = next(iter(docs)) if one else "\n".join(f"{_variant(m)}: {f.doc}" for m, f in found)
            if len(found) < len(models):
                doc = f"({', '.join(_variant(m) for m, _ in found)} only) {doc}" if len(docs) == 1 else doc
            if key == "provider":
                values = tuple(v for m, _ in found for v in get_args(m.model_fields["provider"].annotation))
                self.enums["ClusterProvider"] = _Enum("ClusterProvider", values, "Where the platform runs.")
                self.order.append("ClusterProvider")
                annotation = "ClusterProvider"
                doc = "aws (EKS) | gcp (GKE) | existing (a cluster that exists). Required."
            else:
                annotation = annotations.pop() if len(annotations) == 1 else "Any"
            required = len(found) == len(models) and all(f.required for _, f in found)
            td.fields.append(_Field(key, annotation, required, doc))
        self.dicts[name] = td
        self.order.append(name)
        return name

    # -- output ----------------------------------------------------------------------------------------
    def render(self) -> str:
        """The module's source."""
        out = [
            '"""The config models as TypedDicts and enums, for the schema analyzer. GENERATED: do not edit.\n\n'
            "Made by `python provider/gpu_training_plugin/generate.py` from components/models (and the\n"
            "TrainingJob component's own inputs); tests/provider checks it is current.\n"
            '"""\n\n'
            "# ruff: noqa: E501, D101\n"
            "from enum import IntEnum, StrEnum\n"
            "from typing import Any, NotRequired, TypedDict\n\n"
            "import pulumi\n"
        ]
        for name in self.order:
            if name in self.enums:
                out.append(self._render_enum(self.enums[name]))
            else:
                out.append(self._render_dict(self.dicts[name]))
        return "\n\n".join(part.strip("\n") + "\n" for part in out)

    @staticmethod
    def _render_enum(e: _Enum) -> str:
        base = "StrEnum" if isinstance(e.values[0], str) else "IntEnum"
        lines = [f"class {e.name}({base}):\n", _docstring(e.doc, "    ", first=True)]
        if e.doc:
            lines.append("\n")
        for v in e.values:
            member = re.sub(r"[^0-9A-Za-z]+", "_", re.sub(r"(?<=[a-z])(?=[A-Z])", "_", str(v))).upper().strip("_")
            if member[:1].isdigit():
                member = f"V{member}"
            lines.append(f"    {member} = {json.dumps(v)}\n")
        return "\n" + "".join(lines)

    @staticmethod
    def _render_dict(td: _TypedDict) -> str:
        lines = [f"class {td.name}(TypedDict):\n", _docstring(td.doc, "    ", first=True)]
        if td.source:
            lines.append(f"\n    # from {td.source}\n")
        for f in td.fields:
            ann = f.annotation if f.required else f"NotRequired[{f.annotation}]"
            lines.append(f"    {f.key}: {ann}\n")
            lines.append(_docstring(f.doc, "    "))
        return "\n" + "".join(lines)


def _where(model: type) -> str:
    return f"{model.__module__}.{model.__qualname__}"


def _variant(model: type[BaseModel]) -> str:
    ann = model.model_fields["provider"].annotation if "provider" in model.model_fields else None
    values = get_args(ann) if ann is not None else ()
    return str(values[0]) if values else model.__name__


def _common_suffix(names: list[str]) -> str:
    rev = [n[::-1] for n in names]
    common = []
    for chars in zip(*rev, strict=False):
        if len(set(chars)) != 1:
            break
        common.append(chars[0])
    suffix = "".join(common)[::-1]
    # Start the suffix at a capital letter: AwsClusterSpec, GcpClusterSpec -> ClusterSpec.
    match = re.search(r"[A-Z].*$", suffix)
    return match.group(0) if match else ""


def generate() -> str:
    """The source of config_types.py."""
    from components.models import StackConfig, TrainingJobSpec

    gen = Generator()
    gen.model(StackConfig)
    # TrainingJobArgs: the spec's fields (name defaults to the resource name) and the component's own.
    job = gen.dicts[gen.model(TrainingJobSpec)]
    args = _TypedDict(
        "TrainingJobArgs",
        "The inputs of a TrainingJob: the TrainingJobSpec fields, and the pool, scheduler and queue it runs with.",
        source=f"{_where(TrainingJobSpec)} and components.kubernetes.trainingjob.TrainingJob",
    )
    for f in job.fields:
        if f.key == "name":
            args.fields.append(
                _Field(f.key, f.annotation, False, "Job name, a DNS-1035 label. Default: the resource name.")
            )
        elif f.key == "env":  # a value may be a secret of the caller's program, which becomes the job's own Secret
            args.fields.append(_Field(f.key, "dict[str, pulumi.Input[Any]]", f.required, f.doc))
        else:
            args.fields.append(f)
    for key, annotation, doc in TRAINING_JOB_EXTRAS:
        if any(f.key == key for f in args.fields):
            raise TypeError(f"TrainingJobArgs: the component's input {key} clashes with a TrainingJobSpec field")
        required = not annotation.startswith("NotRequired[")
        inner = annotation if required else annotation[len("NotRequired[") : -1]
        args.fields.append(_Field(key, inner, required, doc))
    gen.dicts[args.name] = args
    gen.order.append(args.name)
    return gen.render()


@dataclass(frozen=True)
class Front:
    """A component the plugin serves: the Python class, the TypedDict of its args, and how its `__init__`
    hands them over (source lines that end in a `super().__init__` call)."""

    component: str
    """module:Class of the Python component."""
    args: str
    """The TypedDict in config_types.py."""
    body: tuple[str, ...]


FRONT_CLASSES = (
    Front(
        "components.kubernetes.trainingjob:TrainingJob",
        "TrainingJobArgs",
        (
            "fields, keywords = adapt.training_job(args, TrainingJobArgs)",
            "super().__init__(name, fields, opts=opts, **keywords)",
        ),
    ),
    Front(
        "components.platform:Platform",
        "StackConfig",
        ("super().__init__(name, adapt.platform(args, StackConfig), opts)",),
    ),
)


def generate_fronts() -> str:
    """The source of fronts.py."""
    import importlib

    out = [
        '"""The components the plugin serves, as the schema analyzer reads them. GENERATED: do not edit.\n\n'
        "Made by `python provider/gpu_training_plugin/generate.py` from the Python components (their docstrings\n"
        "and outputs) and config_types.py; tests/provider checks it is current.\n"
        '"""\n\n'
        "# ruff: noqa: E501\n"
        "from typing import Any\n\n"
        "import pulumi\n\n",
    ]
    modules = sorted({front.component.split(":")[0] for front in FRONT_CLASSES})
    out.append("".join(f"import {module}\n" for module in modules) + "\n")
    out.append("from . import adapt\n")
    out.append(f"from .config_types import {', '.join(sorted(f.args for f in FRONT_CLASSES))}\n")
    for front in FRONT_CLASSES:
        module, name = front.component.split(":")
        component = getattr(importlib.import_module(module), name)
        doc = _docstring(inspect.cleandoc(component.__doc__ or ""), "    ", first=True)
        lines = [f"\n\nclass {name}({module}.{name}):\n", doc, "\n"]
        for key, (annotation, doc) in _annotations(component).items():  # a component's annotations: its outputs
            lines.append(f"    {key}: {annotation}\n")
            lines.append(_docstring(doc, "    "))
        signature = f"self, name: str, args: {front.args}, opts: pulumi.ResourceOptions | None = None"
        lines.append(f"\n    def __init__({signature}) -> None:\n")
        lines.append(f'        """The {name} component, from the schema\'s inputs."""\n')
        lines.extend(f"        {line}\n" for line in front.body)
        out.append("".join(lines))
    return "".join(out)


def main(argv: list[str]) -> int:
    """Write config_types.py and fronts.py, or with --check report whether they are current."""
    files = {OUTPUT: generate(), FRONTS: generate_fronts()}
    if "--check" in argv:
        stale = [path for path, text in files.items() if not path.exists() or path.read_text() != text]
        for path in stale:
            print(f"{path} is stale: run python provider/gpu_training_plugin/generate.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in files.items():
        path.write_text(text)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.path[0] = str(Path(__file__).resolve().parents[2])  # the repository (components/), not this folder
    sys.exit(main(sys.argv[1:]))
