"""Values derived from an immutable object (a resolved pool), computed once per object instead of once per job.

A stack of thousands of jobs on a handful of pools asked the same questions of each pool for every job (its fabric
profile, what a node advertises); `per_object` answers each once. Pools are frozen models holding lists and maps,
so they do not hash: the memo is keyed by the object's identity and keeps the object alive beside its value, so an
identity is never reused while its entry exists. A copy (`model_copy`) is a new object with entries of its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")
R = TypeVar("R")

_LIMIT = 4096
"""Entries a memo keeps before it starts again (a process that resolves many stacks, such as the tests)."""


def per_object(function: Callable[Concatenate[T, P], R]) -> Callable[Concatenate[T, P], R]:
    """`function(obj, *args)` computed once per object and arguments (hashable); the object must not change."""
    cache: dict[tuple[Any, ...], tuple[Any, R]] = {}

    @functools.wraps(function)
    def memo(obj: T, *args: P.args, **kwargs: P.kwargs) -> R:
        key = (id(obj), *args, *kwargs.items())
        hit = cache.get(key)
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = function(obj, *args, **kwargs)
        if len(cache) >= _LIMIT:
            cache.clear()
        cache[key] = (obj, value)
        return value

    memo.cache_clear = cache.clear  # type: ignore[attr-defined]
    return memo
