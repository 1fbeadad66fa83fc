"""Reading what `vlanroute render` wrote (OUTDIR/plan.json, OUTDIR/cabling.csv), for every
command that reads an OUTDIR: verify, push, audit, emulate.

One reader, so that all of them accept and refuse exactly the same files, with the same
messages: `read_plan` validates plan.json once (bundle.document), and nothing from it is
used as a path or a command before that.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Collection, Mapping
from pathlib import Path

from vlanroute.bundle.cables import HEADER, HOST, INTER_SWITCH, LEGACY_HEADER, Cable
from vlanroute.bundle.document import PlanDocument, plan_document
from vlanroute.errors import UserError
from vlanroute.safeio.reading import BUNDLE_LIMIT, load_json, read_text_file
from vlanroute.safeio.paths import require_nameable
from vlanroute.model.platforms import Platform

PLAN_FILE = "plan.json"
CABLING_FILE = "cabling.csv"
CABLING_HEADER = HEADER
OUTDIR_FIX = "give the OUTDIR written by `vlanroute render INVENTORY -o OUTDIR`"


def read_text(path: Path) -> str:
    """A file of OUTDIR: a regular UTF-8 file within BUNDLE_LIMIT (vlanroute.safeio.reading)."""
    return read_text_file(path, limit=BUNDLE_LIMIT, what="bundle file",
                          fix="render again; the file must be the UTF-8 text `vlanroute render` wrote")


def check_outdir(outdir: Path) -> None:
    require_nameable(outdir, "OUTDIR")
    if not outdir.is_dir():
        raise UserError(f"{outdir} is not a directory", field="OUTDIR", fix=OUTDIR_FIX)


def read_plan(outdir: Path | str) -> PlanDocument:
    """OUTDIR/plan.json, validated: names, types and references (bundle.document)."""
    outdir = Path(outdir)
    check_outdir(outdir)
    path = outdir / PLAN_FILE
    if not path.is_file():
        raise UserError(f"no {PLAN_FILE} here", file=str(outdir), fix=OUTDIR_FIX)
    try:
        data = load_json(read_text(path), str(path))
    except json.JSONDecodeError as exc:
        raise UserError(f"not valid JSON: {exc}", file=str(path),
                        fix="render again; plan.json must be the JSON that `vlanroute render` wrote") from None
    return plan_document(data, str(path))


def read_cabling(outdir: Path, switches: Collection[str],
                 platforms: Mapping[str, Platform] | None = None) -> list[Cable]:
    """Every inter-switch cable of OUTDIR/cabling.csv; with `platforms`, each port must
    exist on its switch."""
    return [c for c in read_all_cables(outdir, switches, platforms) if c.kind == INTER_SWITCH]


def read_all_cables(outdir: Path, switches: Collection[str],
                    platforms: Mapping[str, Platform] | None = None,
                    hosts: Collection[str] | None = None, path: Path | None = None) -> list[Cable]:
    """Every cable of OUTDIR/cabling.csv, inter-switch and host (bundle.cables). The file
    of an older render (header a,a_port,b,b_port,a_lag,b_lag: inter-switch cables only, no
    labels) is read too. With `hosts`, a host cable's host must be one of them. `path`:
    another file in the same layout (e.g. the lab's cabling, vlanroute.lab.wiring)."""
    path = path or outdir / CABLING_FILE
    if not path.is_file():
        raise UserError("cabling.csv not found", file=str(path), fix=OUTDIR_FIX)
    cables: list[Cable] = []
    used: dict[tuple[str, str], int] = {}
    try:
        rows = list(csv.reader(read_text(path).splitlines()))
    except csv.Error as exc:
        raise UserError(f"not CSV: {exc}", file=str(path), fix="restore the file from `vlanroute render`") from None
    reader = iter(rows)
    header = next(reader, None)
    if header not in (CABLING_HEADER, LEGACY_HEADER):
        raise UserError(f"header is {header}, expected {','.join(CABLING_HEADER)}",
                        file=str(path), field="line 1", fix="restore the header line")
    width = len(header)
    labels: dict[str, int] = {}
    for lineno, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) != width:
            raise UserError(f"{len(row)} fields, expected {width}", file=str(path), field=f"line {lineno}",
                            fix="one cable per line: " + ",".join(header))
        a, a_port, b, b_port, a_lag, b_lag = (x.strip() for x in row[:6])
        kind, label = (row[6].strip(), row[7].strip()) if width == 8 else (INTER_SWITCH, "")
        if kind not in (INTER_SWITCH, HOST):
            raise UserError(f"kind {kind!r} is neither {INTER_SWITCH} nor {HOST}", file=str(path),
                            field=f"line {lineno}", fix="restore the file from `vlanroute render`")
        ends = [(a, a_port)] if kind == HOST else [(a, a_port), (b, b_port)]
        if kind == HOST and hosts is not None and b not in hosts:
            raise UserError(f"host {b!r} is not in plan.json", file=str(path),
                            field=f"line {lineno}", fix="use the host names of plan.json")
        for sw, port in ends:
            if sw not in switches:
                raise UserError(f"switch {sw!r} is not in plan.json", file=str(path),
                                field=f"line {lineno}", fix="use the switch names of plan.json")
            if platforms is not None and not platforms[sw].has_port(port):
                raise UserError(f"{sw} has no port {port!r} ({platforms[sw].name})", file=str(path),
                                field=f"line {lineno}", fix="use the platform's port names")
            if (sw, port) in used:
                raise UserError(f"{sw} {port} is already cabled on line {used[(sw, port)]}",
                                file=str(path), field=f"line {lineno}",
                                fix="a port holds one cable")
            used[(sw, port)] = lineno
        if label:
            if label in labels:
                raise UserError(f"cable label {label} is already used on line {labels[label]}",
                                file=str(path), field=f"line {lineno}", fix="restore the file from `vlanroute render`")
            labels[label] = lineno
        try:
            lags = tuple(int(x) if x else None for x in (a_lag, b_lag))
        except ValueError:
            raise UserError("a_lag/b_lag must be a LAG number or empty", file=str(path),
                            field=f"line {lineno}", fix="write the LAG id, or nothing") from None
        cables.append(Cable(lineno, a, a_port, b, b_port, lags[0], lags[1], kind, label))
    return cables


def host_macs(doc: PlanDocument) -> dict[str, str]:
    """Each host's MAC: the plan's, or a locally administered unicast one (02:76:72 = 'vr')
    numbered by the host's rank in name order, so that verify and emulate agree on it."""
    out = {}
    for i, name in enumerate(sorted(doc.hosts), start=1):
        mac = doc.hosts[name].mac or "02:76:72:" + ":".join(f"{(i >> s) & 0xFF:02x}" for s in (16, 8, 0))
        out[name] = mac.lower()
    return out
