"""The registry of the providers' pool rules (components/providers.py)."""

from __future__ import annotations

from typing import get_args

from components import providers
from components.pool import Provider


def test_every_provider_a_stack_can_name_has_pool_rules() -> None:
    assert set(providers.RULES) == set(get_args(Provider))
    assert [name for name, rules in providers.RULES.items() if not rules.creates_pools] == ["existing"]
