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
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from vlanroute.errors import UserError
from vlanroute.safeio.reading import safe_quote

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


def _csv_error(exc: csv.Error, line: int, file: str) -> UserError:
    text = str(exc)
    if "field limit" in text:
        return UserError(f"a field is longer than {csv.field_size_limit() // 1024} KiB", file=file,
                         field=f"line {line}", fix="give the hosts CSV itself; no host field is that long")
    if "end of data" in text:
        return UserError("a quoted field is never closed (a '\"' without its partner)", file=file,
                         field=f"line {line}", fix="close the quote, or remove it")
    return UserError(f"not CSV: {text}", file=file, field=f"line {line}",
                     fix="quote a field that holds the separator, and close every quote")


def _rows(reader: Iterator[list[str]], file: str) -> Iterator[list[str]]:
    """The rows of `reader` (a csv.reader), its csv.Error as a UserError with the line."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise _csv_error(exc, getattr(reader, "line_num", 0), file) from None
        yield row


def _shown_header(header: list[str]) -> str:
    """The header's columns for a message; a line that is no header (a file given by mistake,
    even /etc/shadow) is described, never quoted."""
    quoted = [safe_quote(h.strip()) for h in header]
    if not header:
        return "nothing"
    if all(quoted):
        return ", ".join(q.strip("'") for q in quoted if q)
    return f"{len(header)} column(s) that are not column names; is this a hosts CSV?"


def read_hosts_csv(csv_path: Path, text: str, entry: type[E]) -> tuple[list[E], list[int]]:
    """The rows of the hosts CSV `text`, each validated as `entry` (the inventory's
    HostEntry, passed in: inventory.py imports this module, so this one cannot import it),
    and the line of each row (for later messages about a row)."""

    text = text.removeprefix("\ufeff")
    first = text.split("\n", 1)[0]
    # strict: a quote left open would otherwise swallow the rest of the file into one field.
    reader = csv.reader(io.StringIO(text), delimiter=_delimiter(first), strict=True)
    file = str(csv_path)
    try:
        header = next(reader)
    except StopIteration:
        header = []
    except csv.Error as exc:
        raise _csv_error(exc, reader.line_num, file) from None
    columns = [_column(h) for h in header]
    fields = [ALIASES.get(c, "") for c in columns]
    missing = [f for f in REQUIRED if f not in fields]
    if missing:
        raise UserError(f"the header line names no {' and no '.join(missing)} column (it has: "
                        f"{_shown_header(header)})", file=file, field="line 1",
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
            raise UserError(f"the name of column {i + 1} {safe_quote(header[i].strip()) or ''} is not allowed",
                            file=file, field="line 1",
                            fix="column names: letters, digits, '_', '.', '-', starting with a letter")
    entries: list[E] = []
    lines: list[int] = []
    errors: list[str] = []
    for row in _rows(reader, file):
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
