"""Sizes and ports of the AWS file systems behind ReadWriteMany volumes."""

from __future__ import annotations

import math

from components import quantity

# PERSISTENT_2 Lustre file systems come in 1.2 TiB, then 2.4 TiB steps (FSx for Lustre User Guide,
# "Amazon FSx for Lustre performance": storage capacity).
LUSTRE_FIRST_GIB = 1200
LUSTRE_STEP_GIB = 2400
NFS_PORT = 2049
LUSTRE_PORTS = ((988, 988), (1018, 1023))


def lustre_capacity_gib(size: str) -> int:
    """The smallest valid PERSISTENT_2 capacity that holds `size`."""
    wanted = math.ceil(quantity.parse(size) / 2**30)
    if wanted <= LUSTRE_FIRST_GIB:
        return LUSTRE_FIRST_GIB
    return math.ceil(wanted / LUSTRE_STEP_GIB) * LUSTRE_STEP_GIB
