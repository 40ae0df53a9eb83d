"""`check` on the corpus (tests/data/corpus/): our own minimal reductions of manifests upstream projects publish,
each naming the upstream file, commit and licence it reduces and giving the same findings: no crash, every GPU
workload read, each blocking finding a true problem pinned in verdicts.yaml; and on the manifests of the seed
documents."""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.cli.check import Report, review
from components.rules.documents import load
from components.rules.pods import templates

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"
VERDICTS: dict[str, dict[str, Any]] = yaml.safe_load((CORPUS / "verdicts.yaml").read_text())
INDEX: list[dict[str, Any]] = yaml.safe_load((CORPUS / "index.yaml").read_text())
FILES = sorted(str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.yaml") if p.parent != CORPUS)
SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"
HEADER = re.compile(r"# Reduction of ([\w.-]+/[\w.-]+) (\S+) @ ([0-9a-f]{40}) \(([\w.-]+)\): \S.*\n# cluster: \w+\n")


def cluster(path: Path) -> str:
    """The cluster the file's header says it targets."""
    return re.search(r"^# cluster: (\w+)", path.read_text(), re.M).group(1)  # type: ignore[union-attr]


def requests_gpus(node: Any) -> bool:
    """Whether a document asks for nvidia.com/gpu anywhere, whatever its shape."""
    if isinstance(node, dict):
        return any(k == "nvidia.com/gpu" or requests_gpus(v) for k, v in node.items())
    return isinstance(node, list) and any(requests_gpus(i) for i in node)


@pytest.mark.parametrize("name", FILES)
def test_every_file_starts_with_its_reduction_header(name: str) -> None:
    """`# Reduction of <owner/repo> <path> @ <commit> (<licence>): <why>`, then `# cluster:`, as index.yaml names it."""
    text = (CORPUS / name).read_text()
    header = HEADER.match(text)
    assert header, f"{name}: does not start with `# Reduction of ...` and `# cluster:` lines"
    repo, path, commit, licence = header.groups()
    entry = next(e for e in INDEX if e["file"] == name)
    assert entry["source"] == f"https://github.com/{repo}/blob/{commit}/{path}"
    assert (entry["commit"], entry["license"], entry["cluster"]) == (commit, licence, cluster(CORPUS / name))
    comments = [line for line in text.splitlines()[2:] if re.match(r"\s*#", line)]
    assert not comments, f"{name}: comments after the header (none of the upstream file's text is kept): {comments}"


def test_every_file_is_indexed_and_has_a_verdict() -> None:
    assert len(FILES) >= 40
    assert sorted(e["file"] for e in INDEX) == FILES, "every corpus file is in index.yaml, and only those"
    assert all(cluster(CORPUS / name) in ("eks", "gke", "existing") for name in FILES)
    assert sorted(VERDICTS) == FILES, "every corpus file has its pinned verdict, and only those"


@pytest.mark.parametrize("name", FILES)
def test_the_findings_are_the_pinned_ones(name: str) -> None:
    path = CORPUS / name
    report = review(None, [path], cluster=cluster(path))
    pinned = VERDICTS[name] or {}
    assert not [e for e in report.errors if "could not read it" in e], "no rule fails on any object"
    templates_ = [e for e in report.errors if "is an unsubstituted template" in e]
    assert len(templates_) == pinned.get("templates", 0) == len(report.errors)
    mandatory = Counter((f.rule, f.subject) for f in report.findings if f.enforcement == "mandatory")
    expected = {(v["rule"], v["object"]): v["count"] for v in pinned.get("mandatory", [])}
    assert dict(mandatory) == expected
    assert all(v["verdict"].startswith("true: ") for v in pinned.get("mandatory", [])), "no false blocking finding"
    advisory = Counter(f.rule for f in report.findings if f.enforcement == "advisory")
    assert dict(advisory) == pinned.get("advisory", {})
    assert report.code == (2 if templates_ else 1 if mandatory else 0)


@pytest.mark.parametrize("name", FILES)
def test_every_gpu_workload_is_read(name: str) -> None:
    for document in load((CORPUS / name).read_text()).documents:
        if requests_gpus(document.obj) and not document.variables:
            found = templates(document.obj)
            assert any(t.gpus for t in found), f"{document.obj['kind']} asks for GPUs but no GPU pod was read"


def test_the_issues_true_problems_are_found() -> None:
    """The misses that made the review untrustworthy, each found in a reduction of a real file."""
    found = {
        (f.rule, name)
        for name in FILES
        for f in review(None, [CORPUS / name], cluster=cluster(CORPUS / name)).findings
        if f.enforcement == "mandatory"
    }
    rules = {rule for rule, _ in found}
    assert {
        "processes-per-node",  # nprocPerNode 4 on 1-GPU pods
        "node-count",  # trainer.num_nodes=2 against 8 pods
        "pinned-images",  # an image that is a fill-in
        "env-references",  # $PATH in an env value
        "duplicate-keys",  # `resources` stated twice
        "checkpoint-path",  # checkpoints inside the container
    } <= rules
    # No gang-scheduling: its one instance was a CPU-only Volcano Job, which the GPU rules no longer judge, and no
    # upstream GPU job declares a gang smaller than its pods by mistake (Volcano v1.15.1's examples and docs, its
    # website, Kubeflow Trainer and the MPI Operator: the one GPU Job below its pods, docs/design/elastic-scheduler.md,
    # is elastic on purpose). tests/rules/test_rules.py keeps the rule's own case.


@pytest.mark.skipif(not SEEDS.is_dir(), reason="the seed documents (../shared/seeds) are not in this clone")
def test_the_seed_documents_manifests_are_read_without_a_crash() -> None:
    """The manifests in the seed pages: where the page kept their indentation (seeds 000 and 003), every GPU
    workload is read and the findings are true (003's jobs give 8-GPU pods no /dev/shm); where the scrape
    flattened them, they are still read without a crash."""
    outcomes = {}
    for seed in sorted(SEEDS.glob("*.txt")):
        report = review_text("\n---\n".join(manifest_blocks(seed.read_text(encoding="utf-8"))))
        assert not [e for e in report.errors if "could not read it" in e]
        outcomes[seed.name[:3]] = report
    assert [f for f in outcomes["000"].findings if f.enforcement == "mandatory"] == []
    assert "3 with GPUs" in outcomes["000"].coverage
    blocking = Counter((f.rule, f.subject) for f in outcomes["003"].findings if f.enforcement == "mandatory")
    assert blocking == {("shared-memory", "PyTorchJob/bert-finetune"): 1, ("shared-memory", "TFJob/resnet-train"): 2}


def manifest_blocks(text: str) -> list[str]:
    """The YAML manifests in a page's text: from each `apiVersion:` line while lines read as YAML, cut back to
    what parses."""
    lines, blocks, n = text.splitlines(), [], 0
    yaml_line = re.compile(r"^(\s+\S|\s*- |[A-Za-z][\w.-]*:(\s|$)|---\s*$|\s*#|\s*$)")
    while n < len(lines):
        if not lines[n].startswith("apiVersion:"):
            n += 1
            continue
        start = n
        while n < len(lines) and yaml_line.match(lines[n]):
            n += 1
        block = lines[start:n]
        while block:
            try:
                list(yaml.safe_load_all("\n".join(block)))
                break
            except yaml.YAMLError:
                block = block[:-1]
        blocks.append("\n".join(block))
    return blocks


def review_text(text: str) -> Report:
    """The review of YAML text, as `check` reviews a file."""
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "manifests.yaml"
        file.write_text(text)
        return review(None, [file])
