"""components/images.py and the registry mirror: reference parsing, rewriting, and every image of every stack."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from components import images
from components.addons.mirror import CHART_IMAGES, UNREACHED, chart_values, patch
from components.addons.network import pin_multus_image
from components.addons.operators import PYTORCH_INIT_IMAGE, training_operator_patch
from components.manifests.fabriccheck import TEMPLATE_KEY
from components.models import ImagesSpec
from components.render import render
from components.resolution import resolve_file
from tests.addons.test_values_keys import chart_keys, unknown
from tests.support.stacks import STACK_FILES

MIRROR = "mirror.example.com"

components_ = st.from_regex(r"[a-z0-9]{1,6}(?:[._-][a-z0-9]{1,4})?", fullmatch=True)
paths = st.lists(components_, min_size=1, max_size=3).map("/".join)
hosts = st.sampled_from(["nvcr.io", "ghcr.io", "registry.k8s.io", "quay.io", "docker.io", "gcr.io", "a.b.example"])
tags = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}", fullmatch=True)
digests = st.from_regex(r"sha256:[0-9a-f]{64}", fullmatch=True)


@st.composite
def references(draw: st.DrawFn) -> str:
    """An image reference as people write them: with or without a host, a tag, a digest."""
    host = draw(st.none() | hosts)
    path = draw(paths)
    tag, digest = draw(st.none() | tags), draw(st.none() | digests)
    return (f"{host}/" if host else "") + path + (f":{tag}" if tag else "") + (f"@{digest}" if digest else "")


@given(references())
def test_a_reference_parses_to_its_registry_path_tag_and_digest(image: str) -> None:
    ref = images.parse(image)
    first = image.split("/", maxsplit=1)[0]
    assert ref.registry == (first if "/" in image and images.is_host(first) else "docker.io")
    assert images.parse(str(ref)) == ref
    assert (ref.tag is None or f":{ref.tag}" in image) and (ref.digest is None or image.endswith(ref.digest))


@given(references())
def test_a_single_prefix_keeps_the_host_and_everything_after_the_name(image: str) -> None:
    ref = images.parse(image)
    out = images.rewrite({images.ANY_REGISTRY: MIRROR}, image)
    assert out == str(images.Reference(f"{MIRROR}/{ref.registry}", ref.path, ref.tag, ref.digest))
    assert images.parse(out).registry == MIRROR
    assert images.rewrite({images.ANY_REGISTRY: MIRROR}, out) == out  # idempotent


@given(references(), st.sets(hosts, max_size=3))
def test_a_map_replaces_the_hosts_it_names_and_leaves_the_others(image: str, named: set[str]) -> None:
    mirror = {host: f"cache.example.com/{host.replace('.', '-')}" for host in named}
    ref = images.parse(image)
    out = images.rewrite(mirror, image)
    if ref.registry in mirror:
        assert out == str(images.Reference(mirror[ref.registry], ref.path, ref.tag, ref.digest))
    else:
        assert out == image
    assert images.rewrite(mirror, out) == out


def test_docker_hub_official_images_get_library_and_aliases_are_one_registry() -> None:
    ecr = {"docker.io": "123456789012.dkr.ecr.us-east-1.amazonaws.com/docker-hub"}
    assert images.rewrite(ecr, "ubuntu:24.04") == f"{ecr['docker.io']}/library/ubuntu:24.04"
    assert images.rewrite(ecr, "index.docker.io/alpine/k8s:1.34.1") == f"{ecr['docker.io']}/alpine/k8s:1.34.1"
    assert images.rewrite({"*": MIRROR}, "localhost:5000/x:1") == "localhost:5000/x:1"
    assert images.rewrite({"*": MIRROR}, "{IMAGE}") == "{IMAGE}"


def test_images_config_normalizes_and_refuses_what_no_mirror_is() -> None:
    spec = ImagesSpec.model_validate({"registryMirror": {"registry-1.docker.io": "a.example.com/hub/", "*": MIRROR}})
    assert spec.mirror == {"docker.io": "a.example.com/hub", "*": MIRROR}
    assert ImagesSpec.model_validate({"registryMirror": MIRROR}).mirror == {"*": MIRROR}
    for bad in ("https://mirror.example.com", "mirror", {"ubuntu": MIRROR}, {}, {"docker.io": "Mirror.example.com/A"}):
        with pytest.raises(ValidationError):
            ImagesSpec.model_validate({"registryMirror": bad})


def test_remote_installs_and_the_training_operator_pull_through_the_mirror() -> None:
    mirror = {"*": MIRROR}
    daemonset = {"kind": "DaemonSet", "spec": {"template": {"spec": {"containers": [{"image": "x/multus:snapshot"}]}}}}
    patched = patch(mirror, pin_multus_image)
    assert patched is not None
    assert patched(daemonset) is daemonset  # kustomize keeps the object it passed
    container = daemonset["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == f"{MIRROR}/docker.io/x/multus:snapshot"
    stack = resolve_file(STACK_FILES[0])
    config = stack.config.model_copy(update={"images": ImagesSpec(registry_mirror=MIRROR)})
    operator = {"kind": "Deployment", "spec": {"template": {"spec": {"containers": [{"name": "training-operator"}]}}}}
    training_operator_patch(_with(stack, config))(operator)
    args = operator["spec"]["template"]["spec"]["containers"][0]["args"]
    assert f"--pytorch-init-container-image={images.rewrite(mirror, PYTORCH_INIT_IMAGE)}" in args


def _with(stack: Any, config: Any) -> Any:
    """A stand-in with the stack's scheduler and another config (training_operator_patch reads nothing else)."""

    class Stand:
        scheduler = stack.scheduler

    Stand.config = config  # type: ignore[attr-defined]
    return Stand()


def _mirrored(path: Path, tmp: Path, mirror: Any) -> Path:
    doc = yaml.safe_load(path.read_text())
    doc["config"]["gpu-training:images"] = {"registryMirror": mirror}
    out = tmp / path.name
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    # Jobs may sit in files beside the stack.
    for job in doc["config"].get("gpu-training:jobs", []):
        if isinstance(job, str):
            (tmp / job).parent.mkdir(parents=True, exist_ok=True)
            (tmp / job).write_text((path.parent / job).read_text())
    return out


def _pulled(obj: dict[str, Any]) -> list[str]:
    """The images an object makes a node pull, those of a Job waiting in a ConfigMap included."""
    found = images.images_of(obj)
    if obj.get("kind") == "ConfigMap" and TEMPLATE_KEY in (obj.get("data") or {}):
        found += [i for o in yaml.safe_load_all(obj["data"][TEMPLATE_KEY]) if o for i in images.images_of(o)]
    return found


def _values_at(values: dict[str, Any], dotted: str) -> Any:
    for key in dotted.split("."):
        values = values.get(key, {}) if isinstance(values, dict) else {}
    return values


@pytest.mark.parametrize("path", STACK_FILES, ids=lambda p: p.name)
def test_every_image_of_every_stack_goes_through_the_mirror(path: Path, tmp_path: Path) -> None:
    rendered = render(resolve_file(_mirrored(path, tmp_path, MIRROR)))
    pulled = [image for obj in rendered.objects for image in _pulled(obj)]
    assert pulled
    assert [i for i in pulled if not i.startswith(f"{MIRROR}/")] == []
    for release in rendered.addons.releases:
        chart = release.chart.chart.rsplit("/", 1)[-1]
        assert chart in CHART_IMAGES or chart in UNREACHED, f"{chart}: no image values known"
        assert (chart in UNREACHED) == (release.name in rendered.addons.unmirrored)
        for image in CHART_IMAGES.get(chart, ()):
            block = _values_at(release.values, image.at)
            named = [block[k] for k in (image.registry, image.repository) if k is not None]
            assert named and str(named[0]).startswith(f"{MIRROR}/"), (chart, image.at, block)
    if rendered.addons.unmirrored:
        assert any("does not reach" in w for w in rendered.warnings())


@pytest.mark.parametrize("path", STACK_FILES[:2], ids=lambda p: p.name)
def test_a_map_mirrors_only_the_registries_it_names(path: Path, tmp_path: Path) -> None:
    mirror = {"nvcr.io": "cache.example.com/ngc"}
    rendered = render(resolve_file(_mirrored(path, tmp_path, mirror)))
    for image in (i for obj in rendered.objects for i in _pulled(obj)):
        ref = images.parse(image)
        assert ref.registry != "nvcr.io"
        assert (ref.registry == "cache.example.com") == image.startswith("cache.example.com/ngc/")
    assert "from their own registries" in rendered.summary()


def test_chart_values_follow_each_charts_keys() -> None:
    mirror = {"*": MIRROR}
    assert chart_values("volcano", mirror) == {"basic": {"image_registry": f"{MIRROR}/docker.io"}}
    stack = chart_values("kube-prometheus-stack", mirror)
    busybox = {"registry": f"{MIRROR}/docker.io", "repository": "library/busybox"}
    assert stack["grafana"]["initChownData"]["image"] == busybox
    assert chart_values("gpu-operator", {"docker.io": MIRROR}) == {}
    assert chart_values("gpu-operator", {}) == {}


@pytest.mark.parametrize("chart", sorted(CHART_IMAGES), ids=str)
def test_every_image_value_exists_in_the_pinned_chart(chart: str) -> None:
    keys = chart_keys(chart)
    mirrored = chart_values(chart, {"*": MIRROR})
    assert mirrored
    assert unknown(keys, mirrored) == []
