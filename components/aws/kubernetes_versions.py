"""The Kubernetes minors EKS offers, in standard and extended support: pure data, standard library only.

Source: the EKS user guide, "Understand the Kubernetes version lifecycle on EKS" (kubernetes-versions.html), its
release calendar, as endoflife.date/amazon-eks copies it (read 2026-02, with the end dates AWS published then);
the guide's translated copies of 2026 name 1.36 as the newest minor ({k8s-n}), with no date read here. A minor is
in standard support for 14 months from its EKS release, then in paid extended support for 12 more; on the end of
extended support no cluster can be created on it and EKS upgrades those that run it.
"""

from __future__ import annotations

from dataclasses import dataclass

AS_OF = "2026-11-27"
"""The day `MINORS` says what EKS offers."""


@dataclass(frozen=True, slots=True)
class Minor:
    """One Kubernetes minor on EKS and the days its support ends ("" where no source read gives the day)."""

    version: str
    standard_ends: str
    extended_ends: str

    def offered(self, day: str = AS_OF) -> bool:
        """Whether a cluster can be created on it on `day` (standard or extended support)."""
        return not self.extended_ends or day < self.extended_ends

    def extended(self, day: str = AS_OF) -> bool:
        """Whether it is in paid extended support on `day`."""
        return bool(self.standard_ends) and self.standard_ends <= day and self.offered(day)


MINORS: tuple[Minor, ...] = (
    Minor("1.29", "2025-03-23", "2026-03-23"),
    Minor("1.30", "2025-07-23", "2026-07-23"),
    Minor("1.31", "2025-11-26", "2026-11-26"),
    Minor("1.32", "2026-03-23", "2027-03-23"),
    Minor("1.33", "2026-07-29", "2027-07-29"),
    Minor("1.34", "2026-12-02", "2027-12-02"),
    Minor("1.35", "2027-03-27", "2028-03-27"),
    Minor("1.36", "", ""),
)
"""Every minor of the calendar read, oldest first; as of `AS_OF` 1.32 and 1.33 are in extended support, 1.34 to
1.36 in standard support, and 1.31 and older are no longer offered."""
