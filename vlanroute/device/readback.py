"""Push's read-back after a commit: the running config the switch prints, against the
prediction, on canonical lines (Family.canonical_lines).

A switch prints no line for a setting at its default, so a rendered line that some model
takes as its default is absent from that model's read-back although it is in effect.
Each family names such lines, with what their absence means (Family.unprinted, from the
evidence on docs/platforms/<family>.md): checked in a command that prints defaults too
(EOS `show running-config all`), or, for a line that cannot open a loop or cut a VLAN,
taken as the model's default and said in the result. Any other difference is one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import re

from vlanroute.drivers.family import Family


@dataclass
class ReadBack:
    differences: list[str] = field(default_factory=list)   # `-line` predicted, not there; `+line` not predicted
    notes: list[str] = field(default_factory=list)         # absences explained as the model's default


def printed_in(text: str, line: str) -> bool:
    """Is canonical `line` printed in a running config `text`: a global line as a line of its
    own, a port's (`interface Ethernet1: flowcontrol send on`) in that interface's block."""
    header, sep, sub = line.partition(": ")
    lines = text.splitlines()
    if not sep or not header.startswith("interface "):
        return any(raw.strip() == line for raw in lines if raw[:1] not in (" ", "\t"))
    inside = False
    for raw in lines:
        if raw[:1] not in (" ", "\t"):
            inside = raw.strip() == header
        elif inside and raw.strip() == sub:
            return True
    return False


def compare(family: Family, predicted: list[str], after: list[str], show: Callable[[str], str]) -> ReadBack:
    """The differences between the prediction and the read-back `after`, less the absences the
    family explains; `show(command)` runs a read-only command on the switch."""
    result = ReadBack()
    if after == predicted:
        return result
    missing = [x for x in predicted if x not in after]
    extra = [x for x in after if x not in predicted]
    shown: dict[str, str] = {}
    for line in missing:
        rule = next((u for u in family.unprinted if re.fullmatch(u.line, line)), None)
        if rule is None:
            result.differences.append(f"-{line}")
        elif rule.show_all is None:
            result.notes.append(f"`{line}` is not printed: taken as this model's default ({rule.why})")
        else:
            if rule.show_all not in shown:
                shown[rule.show_all] = show(rule.show_all)
            if printed_in(shown[rule.show_all], line):
                result.notes.append(f"`{line}` is printed by `{rule.show_all}` only: this model's default")
            else:
                result.differences.append(f"-{line} (nor in `{rule.show_all}`: not in effect; {rule.why})")
    result.differences += [f"+{x}" for x in extra]
    if not missing and not extra:
        result.differences.append("(the same lines in another order)")
    return result
