"""The range GKE GPU networks' subnets are carved from: one /21 slot per network (components/gpudirect.py names
them). Data and a check, read by the cluster model that takes the range."""

from __future__ import annotations

import ipaddress

DEFAULT_CIDR = "192.168.0.0/16"
"""Where the GPU networks' subnets are carved from, unless the cluster names another range."""
SUBNET_PREFIX = 21
"""Each GPU network's subnet: a /21 (2,048 addresses: one per node, far more than a pool has)."""
SLOTS = 24
"""Subnet slots the range holds for every GPU network: vpc1-8 (0-7), gvnic-1 (8), rdma-0..7 (16-23); the metal
RoCE networks (numbered from SLOTS on, for their order) take none."""


def check_cidr(cidr: str) -> str | None:
    """Why `cidr` cannot hold every GPU network's subnet, or None when it can."""
    try:
        network = ipaddress.ip_network(cidr)
    except ValueError:
        return f"'{cidr}' is not a CIDR such as {DEFAULT_CIDR}"
    if network.version != 4 or network.prefixlen > SUBNET_PREFIX or 2 ** (SUBNET_PREFIX - network.prefixlen) < SLOTS:
        return (
            f"'{cidr}' must be an IPv4 range holding {SLOTS} /{SUBNET_PREFIX} subnets "
            f"(a /16 such as {DEFAULT_CIDR}, or larger)"
        )
    return None
