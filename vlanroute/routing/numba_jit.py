"""The decorator of every compiled kernel: numba.njit, cached on disk. Importing this module
imports numba; callers check routing/jit.py first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba

F = TypeVar("F", bound=Callable[..., Any])


def jit(f: F) -> F:
    """numba.njit, cached on disk where numba finds a place for its cache (next to the
    kernel's file, or the user's cache folder)."""
    try:
        return cast(F, numba.njit(cache=True)(f))
    except RuntimeError:             # no cache locator: compiled on each run instead
        return cast(F, numba.njit(f))
