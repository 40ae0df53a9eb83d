"""The node subnets of an EKS cluster: by zone when known, else a list whose zones are looked up."""

from __future__ import annotations

import pulumi
from pulumi_aws import ec2


class Subnets:
    """The node subnets of a cluster: known by zone, or a list whose zones are looked up."""

    def __init__(
        self,
        *,
        by_zone: dict[str, pulumi.Input[str]] | None = None,
        listed: list[str] | None = None,
        extra: list[pulumi.Input[str]] | None = None,
        parent: pulumi.Resource,
        provider: pulumi.ProviderResource,
    ) -> None:
        """Subnets by zone (new VPC, or a zone map in config), or a plain list of ids."""
        self.by_zone = by_zone
        self.listed = listed or []
        self.extra = extra or []
        self._invoke = pulumi.InvokeOutputOptions(parent=parent, provider=provider)

    @property
    def all(self) -> list[pulumi.Input[str]]:
        """Every subnet the cluster's control plane attaches to."""
        return [*(self.by_zone.values() if self.by_zone is not None else self.listed), *self.extra]

    def for_zone(self, zone: str | None) -> pulumi.Input[list[str]]:
        """The private subnets a pool's nodes go into: its zone's only, when it has one."""
        if zone is None:
            return list(self.by_zone.values()) if self.by_zone is not None else list(self.listed)
        if self.by_zone is not None:
            return [self.by_zone[zone]]
        zones = [ec2.get_subnet_output(id=subnet, opts=self._invoke).availability_zone for subnet in self.listed]
        return pulumi.Output.all(*zones).apply(
            lambda found: [subnet for subnet, az in zip(self.listed, found, strict=True) if az == zone]
        )
