"""The inventory's `site` section: what a site states about its own switches.

`acknowledged_syntax`: the commands a family's render marks unconfirmed (no public source
shows them, `Family.unconfirmed`) that the site has checked on its own switches. Each entry
names the family, the exact items as render's warning lists them (the text before any
parenthesis, e.g. `hashing-mode 6`, or the whole item), who checked and when, and a note
saying how. Those items stop warning, so `render --strict` can gate a pipeline. There is no
"all": an item added by a later version of vlanroute must warn until someone checks it.
Whether the family and items exist is checked when planning (plan/acknowledged.py): the
drivers are a later stage than the inventory.
"""

from __future__ import annotations

import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from vlanroute.names import NAME_PATTERN

# One line of printable text: it is shown in report.html (escaped) and plan.json, never
# sent to a switch or a shell.
NOTE_PATTERN = r"^[^\x00-\x1f\x7f]{1,300}$"
COMMAND_PATTERN = r"^[^\x00-\x1f\x7f]{1,200}$"
WHO_PATTERN = r"^[^\x00-\x1f\x7f]{1,80}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Acknowledgment(_Strict):
    """One family's unconfirmed commands that the site checked on its switches."""
    family: Annotated[str, Field(pattern=NAME_PATTERN)]
    commands: Annotated[list[Annotated[str, Field(pattern=COMMAND_PATTERN)]], Field(min_length=1)]
    note: Annotated[str, Field(pattern=NOTE_PATTERN)]
    by: Annotated[str, Field(pattern=WHO_PATTERN)]
    date: datetime.date


class SiteSpec(_Strict):
    acknowledged_syntax: list[Acknowledgment] = []
