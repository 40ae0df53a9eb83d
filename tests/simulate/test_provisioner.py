"""simulate's stand-in autoscaler (components/simulate/provisioner.py): what it counts as an error of its own."""

from __future__ import annotations

import time
from typing import Any

from components.simulate.client import ClientError
from components.simulate.provisioner import INTERVAL, Provisioner
from tests.support import waiting


class _Refusing:
    """A client whose listings the API server refuses with `code` `times` times, then answers empty."""

    def __init__(self, code: int, times: int) -> None:
        self.code, self.left = code, times

    def list(self, *_: Any) -> list[dict[str, Any]]:
        if self.left:
            self.left -= 1
            raise ClientError(f"refused ({self.code})", self.code)
        return []


def _errors_after(client: _Refusing) -> list[str]:
    provisioner = Provisioner(lambda: client, [], node_cap=1)
    provisioner.start()
    try:
        waiting.until(
            "the loop asking again past every refusal", lambda: not client.left, wait=20 * INTERVAL, poll=INTERVAL / 5
        )
        time.sleep(2 * INTERVAL)
    finally:
        provisioner.stop()
    return provisioner.errors


def test_a_new_crds_storage_initializing_is_asked_again_not_an_error() -> None:
    # kube-apiserver's watch cache answers 429 "storage is (re)initializing" just after a CRD is established (seen in
    # CI on the ProvisioningRequest CRD); the autoscaler's informers retry it, and so does the stand-in.
    assert _errors_after(_Refusing(429, 2)) == []
    assert _errors_after(_Refusing(503, 1)) == []


def test_a_refusal_that_lasts_is_an_error() -> None:
    assert _errors_after(_Refusing(403, 1)) == ["refused (403)"]


def test_a_thing_gone_meanwhile_is_looked_at_again_next_round() -> None:
    # An object deleted between a list and a write (a NodeClaim Karpenter removed, a request withdrawn).
    assert _errors_after(_Refusing(404, 1)) == []
