"""The Kubernetes minors GKE offers, in its release channels and in the Extended channel: pure data.

Source: GKE's release schedule (cloud.google.com/kubernetes-engine/docs/release-schedule) as endoflife.date's API
copies it (google-kubernetes-engine, generated 2026-04-10): each minor's availability, its end of standard support
(after which the Rapid, Regular and Stable channels no longer offer it) and its end of life. The Extended channel
keeps a minor for up to 24 months from its release (GKE, "Get long-term support with the Extended channel"); the
Extended channel's release notes of 2026-05-27 deprecate the last 1.30 patches, in line with that. The Extended
channel's end below is that estimate, not a published day. No source read here gives GKE's 1.36 dates.
"""

from __future__ import annotations

from dataclasses import dataclass

AS_OF = "2026-11-27"
"""The day `MINORS` says what GKE offers."""


@dataclass(frozen=True, slots=True)
class Minor:
    """One Kubernetes minor on GKE and the days its support ends."""

    version: str
    standard_ends: str
    """The end of standard support: the release channels (Rapid, Regular, Stable) offer it until then."""
    extended_ends: str
    """About 24 months after its release: the Extended channel offers it until then."""

    def standard(self, day: str = AS_OF) -> bool:
        """Whether the release channels offer it on `day`."""
        return day < self.standard_ends

    def offered(self, day: str = AS_OF) -> bool:
        """Whether any channel (the Extended one included) offers it on `day`."""
        return day < self.extended_ends


MINORS: tuple[Minor, ...] = (
    Minor("1.29", "2025-02-28", "2026-01-26"),
    Minor("1.30", "2025-07-31", "2026-07-31"),
    Minor("1.31", "2025-11-30", "2026-10-25"),
    Minor("1.32", "2026-02-28", "2027-02-11"),
    Minor("1.33", "2026-06-30", "2027-06-03"),
    Minor("1.34", "2026-08-30", "2027-09-30"),
    Minor("1.35", "2027-02-28", "2028-02-11"),
)
"""Every minor of the schedule read, oldest first; as of `AS_OF` the release channels offer 1.35, the Extended
channel 1.32 to 1.35, and 1.31 and older are no longer offered."""
