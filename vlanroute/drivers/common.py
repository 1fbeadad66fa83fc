"""Helpers shared by the config parsers: errors that name file and line, VLAN id lists.

The parsers deliberately do not reuse the renderer's helpers: verification is only
independent if reading the text back does not share code with writing it.
"""

from __future__ import annotations

import re

from vlanroute.errors import UserError
from vlanroute.safeio.reading import shown_line


class ConfigParseError(UserError):
    """A config line the parser does not understand or the switch would reject."""


def parse_error(source: str, lineno: int, line: str, message: str,
                fix: str | None = None) -> ConfigParseError:
    # shown_line: a file given by mistake (even /etc/shadow) is not quoted in the message
    return ConfigParseError(f"{message}: {shown_line(line)}", file=source or "<config>",
                            field=f"line {lineno}", fix=fix)


def vlan_ids(text: str, *, vid_max: int = 4094) -> set[int]:
    """'101-103,110' -> {101, 102, 103, 110}; ValueError on anything else."""
    if not text or any(c.isspace() for c in text):
        raise ValueError(f"bad VLAN list {text!r}")
    out: set[int] = set()
    for part in text.split(","):
        first, sep, last = part.partition("-")
        if not first.isdigit() or (sep and not last.isdigit()):
            raise ValueError(f"bad VLAN list {text!r}")
        lo = int(first)
        hi = int(last) if sep else lo
        if lo > hi or lo < 1 or hi > vid_max:
            raise ValueError(f"VLAN range {part!r} outside 1-{vid_max}")
        out.update(range(lo, hi + 1))
    return out


def vlan_ids_named(line: str, patterns: tuple[re.Pattern[str], ...]) -> set[int]:
    """The VLAN ids a config line names where one of `patterns` matches (group 1 a VLAN
    list); a match that is not a valid list names none. For lines a parser keeps without
    modelling them: push refuses a switch whose such lines touch a routing VLAN."""
    out: set[int] = set()
    for pattern in patterns:
        for m in pattern.finditer(line):
            try:
                out |= vlan_ids(m.group(1))
            except ValueError:
                pass
    return out


def normalize_mac(text: str) -> str:
    """Any usual MAC spelling (00-1E-C9-.., 001e.c9.., 00:1e:..) -> 00:1e:c9:aa:bb:cc."""
    digits = re.sub(r"[^0-9a-fA-F]", "", text).lower()
    return ":".join(digits[i:i + 2] for i in range(0, 12, 2))
