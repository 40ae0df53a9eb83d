"""The recovery rule: a Kueue Topology ends at the host, so that Kueue can swap a failed node of a job it places."""

from __future__ import annotations

from components import rules
from components.manifests.queues import kueue_topology, resource_flavor
from components.rules.rule import Settings
from components.rules.subjects import from_objects
from components.topology import HOSTNAME_LABEL, provider_topology
from tests.rules.corpus import QUEUE_CASES
from tests.support.factories import pool, with_topology


def _found(objects: list[dict]) -> list[tuple[str, str, str]]:
    subjects = from_objects(objects)
    return [(f.subject, f.enforcement, f.message) for f in rules.run(subjects, Settings(gang_scheduler="kueue"))]


def test_every_topology_the_platform_makes_ends_at_the_host() -> None:
    for provider, machine in (("aws", "p5.48xlarge"), ("aws", "p6-b200.48xlarge"), ("gcp", "a3-megagpu-8g")):
        topology = kueue_topology(provider_topology(provider, machine, []))
        assert topology["spec"]["levels"][-1] == {"nodeLabel": HOSTNAME_LABEL}
        assert _found([topology]) == []


def test_a_topology_without_the_host_is_advice_naming_the_flavors_that_use_it() -> None:
    ((subject, level, message),) = [
        (f.subject, f.enforcement, f.message) for f in rules.run(QUEUE_CASES["tas-hostname-level"], Settings())
    ]
    assert level == "advisory"
    assert subject.endswith("Topology/" + subject.split("/")[-1])
    assert "(ResourceFlavor p5)" in message
    assert "evicts and re-admits the whole job" in message


def test_only_kueue_topologies_are_judged() -> None:
    other = {
        "apiVersion": "example.com/v1",
        "kind": "Topology",
        "metadata": {"name": "racks"},
        "spec": {"levels": [{"nodeLabel": "rack"}]},
    }
    assert _found([other]) == []


def test_the_stacks_flavor_and_topology_pass_together() -> None:
    p = with_topology(pool("efa"))
    assert p.topology is not None
    assert _found([kueue_topology(p.topology), resource_flavor(p)]) == []
