"""Nautobot as the site's source of truth (docs/import.md):
`vlanroute import nautobot` reads one location's or tag's fabric into an inventory, and
`vlanroute export nautobot OUTDIR` writes a rendered plan's cables (as planned cables) and
VLANs back, idempotent, with --dry-run. The token comes from $NAUTOBOT_TOKEN only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import yaml

from vlanroute.commands.output import emit_document, json_option, quiet_option
from vlanroute.errors import UserError
from vlanroute.exitcodes import ExitCode
from vlanroute.model.nautobot import (Imported, Selection, URL_ENV, connect, interpret, read_fabric, server_url,
                                      source_label)
from vlanroute.names import NAME_PATTERN
from vlanroute.safeio.output import write_output

SHOWN_PROBLEMS = 20


def _platform_map(pairs: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.rpartition("=")
        if not sep or not key or not value:
            raise UserError(f"bad mapping {pair!r}", field="--platform-map",
                            fix="NAUTOBOT_PLATFORM_OR_DEVICE_TYPE=VLANROUTE_PLATFORM, e.g. "
                                "'PowerConnect 6248=powerconnect-6248'")
        out[key] = value
    return out


def selection_options(f: Any) -> Any:
    """--url, --location, --tag, --switch-role, --host-role, --platform-map."""
    for option in reversed((
        click.option("--url", envvar=URL_ENV, show_envvar=True, metavar="URL",
                     help="The Nautobot server (the token comes from $NAUTOBOT_TOKEN)."),
        click.option("--location", metavar="NAME", help="The site's location: its devices make the fabric."),
        click.option("--tag", metavar="NAME", help="Only devices with this tag (with --location: both)."),
        click.option("--switch-role", "switch_roles", multiple=True, default=("switch",), show_default=True,
                     metavar="ROLE", help="Device role of the fabric's switches (repeatable; case-insensitive)."),
        click.option("--host-role", "host_roles", multiple=True, metavar="ROLE",
                     help="Device role of the hosts (repeatable); default: every other device selected."),
        click.option("--platform-map", "platform_map", multiple=True, metavar="NAUTOBOT=PLATFORM",
                     help="A Nautobot platform or device type name -> a vlanroute platform (repeatable)."),
    )):
        f = option(f)
    return f


def make_selection(location: str | None, tag: str | None, switch_roles: tuple[str, ...],
                   host_roles: tuple[str, ...], platform_map: tuple[str, ...]) -> Selection:
    return Selection(location=location, tag=tag, switch_roles=switch_roles, host_roles=host_roles,
                     platform_map=_platform_map(platform_map))


def checked_import(url: str, selection: Selection, name: str) -> Imported:
    """Read the selection and check it as `plan` checks a YAML inventory: Nautobot's own
    problems (cable ends, hosts without a port, LAGs) and then the inventory's (names, MACs,
    ports the platform has, ports used twice), with the same messages. Every problem found
    is listed in one UserError; nothing is written then."""
    api = connect(url)
    imported = interpret(read_fabric(api, url, selection), selection, name)
    label = source_label(url, selection)
    problems = list(imported.problems)
    if imported.inventory["topology"]["switches"]:
        found = _pipeline_problem(imported, label)
        if found:
            problems.append(found)
    if problems:
        shown = "\n  ".join(problems[:SHOWN_PROBLEMS])
        more = len(problems) - SHOWN_PROBLEMS
        raise UserError(f"{len(problems)} problem(s) in the fabric as Nautobot has it:\n  {shown}"
                        + (f"\n  ... and {more} more" if more > 0 else ""), file=label,
                        fix="correct the objects named in Nautobot (or the selection), then import again")
    return imported


def _pipeline_problem(imported: Imported, label: str) -> str | None:
    """The first problem the inventory's own checks find (model/, plan/ports.py)."""
    from vlanroute.model.hosts import build_hosts
    from vlanroute.model.inventory import inventory_from_mapping
    from vlanroute.model.topology import build_topology
    from vlanroute.plan.ports import build_port_plan, resolve_platforms
    try:
        inv = inventory_from_mapping(imported.inventory, label)
        topo = build_topology(inv)
        hosts = build_hosts(inv, topo)
        build_port_plan(inv, topo, hosts, resolve_platforms(inv, topo))
    except UserError as exc:
        # The inventory field, and the Nautobot object it came from where one does.
        where = f"inventory {exc.field}" if exc.field else ""
        for path, obj in imported.origin.items():
            if exc.field and (exc.field == path or exc.field.startswith(path + ".")):
                where = f"{obj} ({where})"
                break
        text = exc.message.replace(label + ": ", "")
        return (f"{where}: {text}" if where else text) + (f"\n    fix: {exc.fix}" if exc.fix else "")
    return None


@click.command("nautobot")
@selection_options
@click.option("--name", default="fabric", show_default=True, help="The inventory's name.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the inventory to this file instead of stdout.")
@json_option
@quiet_option(help="Print the inventory (it is the product: on stdout, or into -o FILE) and besides it "
                   "only warnings and errors (on stderr).")
def import_nautobot(url: str | None, location: str | None, tag: str | None, switch_roles: tuple[str, ...],
                    host_roles: tuple[str, ...], platform_map: tuple[str, ...], name: str, output: Path | None,
                    as_json: bool, quiet: bool) -> int:
    """Read a fabric from Nautobot (switches, cables, LAGs, hosts of --location or --tag) and
    print it as a vlanroute inventory, checked as `plan` checks one."""
    import re
    if not re.match(NAME_PATTERN, name):
        raise UserError(f"bad name {name!r}", field="--name", fix="letters, digits, '_', '.', '-', starting with a letter")
    base = server_url(url)
    selection = make_selection(location, tag, switch_roles, host_roles, platform_map)
    imported = checked_import(base, selection, name)
    inv = imported.inventory
    if as_json:
        from vlanroute.schemas.outputs import ImportDocument
        emit_document(ImportDocument.model_validate({
            "source": base, "groups": [selection.describe()], "name": inv["name"], "platform": inv["platform"],
            "topology": inv["topology"], "hosts": inv["hosts"], "switches": inv.get("switches"),
            "notes": imported.notes}))
        return ExitCode.OK
    header = [f"# from {source_label(base, selection)}"] + [f"# note: {n}" for n in imported.notes]
    text = "\n".join(header) + "\n" + yaml.safe_dump(inv, sort_keys=False, default_flow_style=None, width=120)
    if output is not None:
        write_output(output, text)
        if not quiet:
            click.echo(f"{output}: {len(inv['topology']['switches'])} switches, "
                       f"{sum(len(link['ports']) for link in inv['topology']['links'])} inter-switch cables, "
                       f"{len(inv['hosts']['list'])} hosts", err=True)
    else:
        click.echo(text, nl=False)
    if not quiet:
        for note in imported.notes:
            click.echo(f"note: {note}", err=True)
    return ExitCode.OK


@click.command("nautobot")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--url", envvar=URL_ENV, show_envvar=True, metavar="URL",
              help="The Nautobot server (the token comes from $NAUTOBOT_TOKEN).")
@click.option("--location", metavar="NAME", help="The location of the fabric's devices in Nautobot.")
@click.option("--tag", metavar="NAME", help="Only devices with this tag (with --location: both).")
@click.option("--dry-run", is_flag=True, help="Print what would change; change nothing.")
@json_option
@quiet_option(help="Print only the summary line, warnings and errors.")
def export_nautobot(outdir: Path, url: str | None, location: str | None, tag: str | None, dry_run: bool,
                    as_json: bool, quiet: bool) -> int:
    """Write OUTDIR's plan to Nautobot: its cables as planned cables, its VLANs in the VLAN
    group vlanroute-NAME, each planned port's mode, untagged and tagged VLANs and LAG.
    Idempotent; a conflict (a port cabled elsewhere, a missing device) stops it before any write."""
    from vlanroute.bundle.reader import read_plan
    from vlanroute.integrations.nautobot_writeback import apply, compute

    doc = read_plan(outdir)
    base = server_url(url)
    selection = Selection(location=location, tag=tag)
    api = connect(base)
    result = compute(api, base, doc, selection) if dry_run else apply(api, base, doc, selection)
    label = source_label(base, selection)
    if result.conflicts:
        shown = "\n  ".join(result.conflicts[:SHOWN_PROBLEMS])
        more = len(result.conflicts) - SHOWN_PROBLEMS
        raise UserError(f"{len(result.conflicts)} conflict(s) between the plan and Nautobot; nothing was written:"
                        f"\n  {shown}" + (f"\n  ... and {more} more" if more > 0 else ""), file=label,
                        fix="correct Nautobot (devices, interfaces, cables) or the selection, then run it again")
    verb = "would " if dry_run else ""
    if as_json:
        from vlanroute.schemas.outputs import ExportNautobotDocument
        emit_document(ExportNautobotDocument.model_validate({
            "outdir": str(outdir), "server": base, "selection": selection.describe(), "dry_run": dry_run,
            "written": result.written, "changes": [{"kind": c.kind, "action": c.action, "what": c.what}
                                                   for c in result.changes],
            "counts": result.counts(), "notes": result.notes}))
        return ExitCode.OK
    if not quiet:
        for c in result.changes:
            click.echo(f"{verb}{c.action} {c.what}")
        for note in result.notes:
            click.echo(f"note: {note}", err=True)
    counts = result.counts()
    summary = ", ".join(f"{n} {key}" for key, n in counts.items()) or "nothing to change"
    click.echo(f"{label}: {summary}" + (" (dry run: nothing written)" if dry_run and counts else ""))
    return ExitCode.OK
