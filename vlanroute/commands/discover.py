"""`vlanroute discover`: an inventory fragment from the switches' LLDP tables (docs/cabling.md)."""

from __future__ import annotations

import ipaddress
from pathlib import Path
import re

import click
import yaml

from vlanroute.device.credentials import load_credentials
from vlanroute.device.discover import discover, fragment
from vlanroute.device.lldp import LldpSource, has_lldp_reader, read_tables
from vlanroute.device.targets import GUARD_ENV, TARGETS_ENV, loopback_guard_active, read_target_map
from vlanroute.drivers import family_of
from vlanroute.commands.output import emit_document, json_option, quiet_option
from vlanroute.commands.sshopts import INSECURE_FLAG, connection_options, host_key_policy
from vlanroute.errors import UserError
from vlanroute.exitcodes import ExitCode
from vlanroute.model.platforms import PLATFORMS
from vlanroute.names import NAME_PATTERN
from vlanroute.natural import natsorted_items
from vlanroute.safeio.output import write_output


def _switch_spec(text: str) -> tuple[str, tuple[str, int]]:
    """NAME=ADDRESS[:PORT] -> (name, (address, port)); the address must be an IP literal."""
    name, sep, where = text.partition("=")
    host, _, port = where.rpartition(":") if where.count(":") == 1 else (where, "", "")
    try:
        if not sep or not re.match(NAME_PATTERN, name):
            raise ValueError(text)
        address = str(ipaddress.ip_address(host))
        number = int(port) if port else 22
        if not 1 <= number <= 65535:
            raise ValueError(port)
    except ValueError:
        raise UserError(f"bad switch {text!r}", field="--switch",
                        fix="NAME=ADDRESS or NAME=ADDRESS:PORT, an IP address, e.g. sw1=192.0.2.11") from None
    return name, (address, number)


@click.command("discover")
@connection_options
@click.option("--targets", "targets_file", type=click.Path(dir_okay=False, path_type=Path),
              envvar=TARGETS_ENV, show_envvar=True,
              help="A target map (vlanroute-targets/1, as `vlanroute lab up` writes): the switches to read.")
@click.option("--switch", "specs", multiple=True, metavar="NAME=ADDRESS[:PORT]",
              help="A switch to read (repeatable), besides those of --targets.")
@click.option("--name", default="discovered", show_default=True, help="The inventory's name.")
@click.option("--platform", default="powerconnect-6248", show_default=True,
              help="The switches' platform (its family says how to read LLDP).")
@click.option("--known-hosts", type=click.Path(dir_okay=False, path_type=Path),
              envvar="VLANROUTE_KNOWN_HOSTS", show_envvar=True,
              help="Extra known_hosts file, besides ~/.ssh/known_hosts.")
@click.option(INSECURE_FLAG, "insecure", is_flag=True,
              help="DANGEROUS: accept any SSH host key.")
@click.option("--workers", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Switches read in parallel.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the fragment to this file (default: stdout).")
@json_option(doc="docs/cabling.md")
@quiet_option(help="Print the fragment (it is the product: on stdout, or into -o FILE) and "
                   "besides it only warnings and errors (on stderr).")
def command(targets_file: Path | None, specs: tuple[str, ...], name: str, platform: str, known_hosts: Path | None,
            insecure: bool, workers: int, output: Path | None, as_json: bool, quiet: bool) -> int:
    """Read the LLDP neighbour tables of the given switches and print an inventory fragment:
    a `custom` topology with every inter-switch cable and its ports (several cables between
    two switches become one link with a count: a LAG), the hosts that send LLDP, and the
    switches' addresses. Each switch's host name must be its name here. Read-only."""
    if not re.match(NAME_PATTERN, name):
        raise UserError(f"bad name {name!r}", field="--name", fix="letters, digits, '_', '.', '-', starting with a letter")
    addresses: dict[str, tuple[str, int]] = {}
    if targets_file is not None:
        addresses.update(read_target_map(targets_file).switches)
    for spec in specs:
        switch, where = _switch_spec(spec)
        addresses[switch] = where
    if not addresses:
        raise UserError("no switches to read", field="--targets/--switch",
                        fix="give a target map (--targets FILE) or --switch NAME=ADDRESS, repeated")
    if platform not in PLATFORMS:
        raise UserError(f"unknown platform {platform!r}", field="--platform",
                        fix="choose from: " + ", ".join(sorted(PLATFORMS)))
    family = family_of(PLATFORMS[platform])
    if family.cli is None or not has_lldp_reader(family):
        raise UserError(f"{family.title} switches cannot be read over SSH for LLDP", field="--platform",
                        fix="discover reads the families with an LLDP reader (docs/cabling.md)")
    if loopback_guard_active():
        bad = [f"{n} ({h})" for n, (h, _) in addresses.items() if not ipaddress.ip_address(h).is_loopback]
        if bad:
            raise UserError(f"refusing to connect: the loopback guard is on ({GUARD_ENV} is set or a test "
                            f"is running) and these are not 127.0.0.0/8 addresses: {', '.join(bad)}",
                            field="--targets/--switch")
    creds = load_credentials()
    sources = [LldpSource(n, h, p, family, family.cli) for n, (h, p) in sorted(addresses.items())]
    tables = read_tables(sources, creds, host_key_policy(insecure, known_hosts), workers)
    found = discover(tables)
    frag = fragment(found, name, platform, addresses)
    if as_json:
        from vlanroute.schemas.outputs import DiscoverDocument
        emit_document(DiscoverDocument.model_validate({
            "inventory": frag, "notes": found.notes,
            "not_read": {s: t.error for s, t in tables.items() if t.error}}))
    else:
        cables = sum(len(link["ports"]) for link in found.links)  # type: ignore[arg-type,misc]
        header = (f"# Discovered by `vlanroute discover` from the LLDP tables of {len(sources)} switches:\n"
                  f"# {len(found.links)} switch pairs, {cables} cables, "
                  f"{len(found.hosts)} hosts that send LLDP. Add the hosts that do not, then plan.\n")
        header += "".join(f"# note: {n}\n" for n in found.notes)
        text = header + yaml.safe_dump(frag, sort_keys=False, default_flow_style=None, width=100)
        if output is None:
            click.echo(text, nl=False)
        else:
            write_output(output, text)
            if not quiet:
                click.echo(f"{output}: {len(found.switches)} switches, {len(found.links)} links, "
                           f"{len(found.hosts)} hosts", err=True)
        if quiet:               # errors: the fragment's header names them only as comments
            for switch, table in natsorted_items(tables):
                if table.error:
                    click.echo(f"discover: {switch}: LLDP table not read: {table.error}", err=True)
    # A switch not read leaves its cables out: the fragment is written, the exit code says so.
    return ExitCode.FAILED_CHECK if any(t.error for t in tables.values()) else ExitCode.OK
