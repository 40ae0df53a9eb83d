"""One review: what every rule derives from the same subjects (the stack's pools, the devices they tell of, a
workload's pod templates) is derived once per review instead of once per rule and subject. A stack of a thousand
jobs asked each of its 3,000 subjects' rules to re-read every pool, which made render's mandatory pass quadratic."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_CACHE: ContextVar[dict[tuple[Any, ...], tuple[tuple[Any, ...], Any]] | None] = ContextVar("review", default=None)


@contextmanager
def review() -> Iterator[None]:
    """Within it, `once` functions answer each question once; the subjects must not change meanwhile."""
    if _CACHE.get() is not None:  # a review inside a review shares the outer one
        yield
        return
    token = _CACHE.set({})
    try:
        yield
    finally:
        _CACHE.reset(token)


def once(function: Callable[P, R]) -> Callable[P, R]:
    """`function(*args)` computed once per review for the same arguments (by identity); outside a review, every
    call computes. Its value is shared: callers must not change it."""

    @functools.wraps(function)
    def memo(*args: P.args, **kwargs: P.kwargs) -> R:
        cache = _CACHE.get()
        if cache is None:
            return function(*args, **kwargs)
        key = (function, *map(id, args), *kwargs.items()) if kwargs else (function, *map(id, args))
        hit = cache.get(key)
        if hit is not None:
            return hit[1]
        value = function(*args, **kwargs)
        cache[key] = (args, value)  # the arguments kept alive, so no identity is reused while the review lasts
        return value

    return memo
