"""Natural order of names: `sw2` before `sw10`, `node9` before `node10`, `1/g9` before `1/g10`.

Every list of switches or hosts a person reads (push and audit tables, verify's tables, the
lab's addresses, error messages) is in this order; digit runs compare as numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar
import re

_DIGITS = re.compile(r"(\d+)")
V = TypeVar("V")


def natural_key(name: str) -> tuple[str | int, ...]:
    """Split into text and numbers: 'sw10' -> ('sw', 10, ''). re.split with a group always
    alternates text, number, text, so two keys compare text with text and number with number."""
    return tuple(int(part) if i % 2 else part for i, part in enumerate(_DIGITS.split(name)))


def natsorted(names: Iterable[str]) -> list[str]:
    return sorted(names, key=natural_key)


def natsorted_items(by_name: Mapping[str, V]) -> list[tuple[str, V]]:
    """A mapping keyed by switch or host name, as (name, value) pairs in natural order."""
    return sorted(by_name.items(), key=lambda kv: natural_key(kv[0]))
