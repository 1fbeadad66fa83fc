"""The hosts CSV (inventory `hosts.csv`), read the way sites keep such lists.

- The first line names the columns, in any order and any case: `hostname` (or `host`,
  `name`), `switch`, and optionally `mac`, `port`, `interface`. Every other column is kept
  as a host attribute (rack, serial, ...): the loaded inventory carries it, nothing is sent
  anywhere from it.
- Separated by commas, semicolons or tabs (spreadsheet exports differ by locale), UTF-8
  with or without a byte order mark.
- MACs as `00:13:c6:01:53:a7`, `00-13-C6-01-53-A7`, `0013.c601.53a7` or `0013c60153a7`.
- Every bad row is reported with its line number (all of them, up to MAX_ERRORS).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from vlanroute.errors import UserError

MAX_ERRORS = 20
E = TypeVar("E", bound=BaseModel)
# Column -> the HostEntry field it fills.
ALIASES = {
    "hostname": "name", "host": "name", "name": "name", "node": "name",
    "switch": "switch",
    "mac": "mac", "mac_address": "mac", "macaddress": "mac", "hwaddr": "mac",
    "port": "port", "switch_port": "port", "switchport": "port",
    "interface": "interface", "iface": "interface", "nic": "interface",
}
REQUIRED = ("name", "switch")
ATTRIBUTE_PATTERN = r"^[A-Za-z][A-Za-z0-9_.-]{0,62}$"
FIX = ("names: letters, digits, '_', '.', '-', starting with a letter; MAC like 00:1e:c9:aa:bb:cc, "
       "00-1e-c9-aa-bb-cc or 001e.c9aa.bbcc")


def _column(header: str) -> str:
    return re.sub(r"[\s-]+", "_", header.strip().lower())


def _delimiter(first_line: str) -> str:
    counts = {d: first_line.count(d) for d in (",", ";", "\t")}
    return max(counts, key=lambda d: counts[d]) if any(counts.values()) else ","


def read_hosts_csv(csv_path: Path, text: str, entry: type[E]) -> tuple[list[E], list[int]]:
    """The rows of the hosts CSV `text`, each validated as `entry` (the inventory's
    HostEntry, passed in: inventory.py imports this module, so this one cannot import it),
    and the line of each row (for later messages about a row)."""

    text = text.removeprefix("\ufeff")
    first = text.split("\n", 1)[0]
    reader = csv.reader(io.StringIO(text), delimiter=_delimiter(first))
    file = str(csv_path)
    try:
        header = next(reader)
    except StopIteration:
        header = []
    columns = [_column(h) for h in header]
    fields = [ALIASES.get(c, "") for c in columns]
    missing = [f for f in REQUIRED if f not in fields]
    if missing:
        raise UserError(f"the header line names no {' and no '.join(missing)} column (it has: "
                        f"{', '.join(header) or 'nothing'})", file=file, field="line 1",
                        fix="start the file with a header line such as: hostname,mac,switch,port "
                            "(any order; other columns are kept as host attributes)")
    for i, c in enumerate(columns):
        if not c:
            raise UserError(f"column {i + 1} has no name", file=file, field="line 1",
                            fix="name every column in the header line")
        if columns.index(c) != i or (fields[i] and fields.index(fields[i]) != i):
            raise UserError(f"column '{header[i].strip()}' repeats column {fields.index(fields[i]) + 1 if fields[i] else columns.index(c) + 1}",
                            file=file, field="line 1", fix="name each column once")
        if not fields[i] and not re.match(ATTRIBUTE_PATTERN, c):
            raise UserError(f"column name '{header[i].strip()}' is not allowed", file=file, field="line 1",
                            fix="column names: letters, digits, '_', '.', '-', starting with a letter")
    entries: list[E] = []
    lines: list[int] = []
    errors: list[str] = []
    for row in reader:
        lineno = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) > len(columns):
            errors.append(f"line {lineno}: {len(row)} values but the header names {len(columns)} columns")
            continue
        values = [c.strip() for c in row] + [""] * (len(columns) - len(row))
        known = {f: v for f, v in zip(fields, values) if f and v}
        attributes = {c: v for c, f, v in zip(columns, fields, values) if not f and v}
        try:
            entries.append(entry(**known, attributes=attributes))
            lines.append(lineno)
        except ValidationError as exc:
            for err in exc.errors():
                where = ".".join(map(str, err["loc"]))
                column = next((header[i].strip() for i, f in enumerate(fields) if f == where), where)
                errors.append(f"line {lineno}: {column}: {err['msg'].removeprefix('Value error, ')}")
        if len(errors) >= MAX_ERRORS:
            break
    if errors:
        shown = "\n  ".join(errors)
        raise UserError(f"{len(errors)} bad row(s){' (first ' + str(MAX_ERRORS) + ')' if len(errors) >= MAX_ERRORS else ''}:"
                        f"\n  {shown}", file=file, field=errors[0].split(":", 1)[0], fix=FIX)
    return entries, lines
