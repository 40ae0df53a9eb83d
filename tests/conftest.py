"""Shared fixtures: Pulumi mocks (set for every test, preview off so outputs resolve)."""

from __future__ import annotations

from collections.abc import Iterator

import pulumi
import pytest

from tests.support.pulumi_mocks import RecordingMocks, RecordingMonitor


@pytest.fixture(autouse=True)
def pulumi_mocks() -> Iterator[RecordingMonitor]:
    """Fresh Pulumi mocks for each test; the monitor records what the program registers."""
    mocks = RecordingMocks()
    monitor = RecordingMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project="gpu-training", stack="dev", preview=False, monitor=monitor)
    yield monitor
    # Pulumi keeps config and its secret keys per process: a test that marks a key secret must not leave it so.
    pulumi.runtime.set_all_config({}, secret_keys=[])
