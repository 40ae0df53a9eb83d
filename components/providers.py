"""Each provider's pool rules, by provider name: what pool resolution asks of aws, gcp or an existing cluster.

Why a module of its own: the rules sit in their provider's package (components/aws/pools.py, components/gcp/pools.py,
components/existing/pools.py) but belong to the pool layer, beside components/pools.py, not to the cloud shells
around them; they are pure and import only components/poolrules.py and what lies below it (models, catalog, errors).
pools.py (resolution) imports this registry, and this registry the rule modules, so no import points up and none loops
back: pools -> providers -> {aws,gcp,existing}.pools -> poolrules. The packages' __init__ modules load Pulumi lazily, so
importing the rules loads no cloud SDK.
"""

from __future__ import annotations

from collections.abc import Mapping

from components.aws import pools as aws
from components.existing import pools as existing
from components.gcp import pools as gcp
from components.poolrules import ProviderRules

RULES: Mapping[str, ProviderRules] = {"aws": aws.RULES, "gcp": gcp.RULES, "existing": existing.RULES}
"""The rules of every provider a stack can name in cluster.provider."""


def rules(provider: str) -> ProviderRules:
    """The pool rules of `provider` (aws, gcp or existing)."""
    return RULES[provider]
