"""`vlanroute import ansible INVENTORY --hosts-group G [--switches-group S]`: the hosts
section of a vlanroute inventory (and the switches' management addresses) from an Ansible
inventory, as YAML to paste into (or merge with) the vlanroute inventory."""

from __future__ import annotations

from pathlib import Path

import click
import yaml

from vlanroute.commands.nautobot import import_nautobot
from vlanroute.commands.output import emit_document, json_option, quiet_option
from vlanroute.errors import UserError
from vlanroute.exitcodes import ExitCode
from vlanroute.model.ansible_inventory import VarNames, read_ansible_inventory, to_vlanroute
from vlanroute.model.ansible_list import ansible_inventory_command, run_ansible_inventory
from vlanroute.safeio.output import write_output

SHOWN_ERRORS = 20


@click.group("import")
def command() -> None:
    """Turn node lists kept elsewhere into vlanroute inventory sections."""


@command.command("ansible")
@click.argument("inventory", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--hosts-group", "host_groups", multiple=True, required=True, metavar="GROUP",
              help="Ansible group of the cluster's hosts (repeatable; children included).")
@click.option("--switches-group", "switch_groups", multiple=True, metavar="GROUP",
              help="Ansible group of the switches: their management address (ansible_host).")
@click.option("--switch-var", default=VarNames.switch, show_default=True,
              help="Host variable naming the switch a host is cabled to.")
@click.option("--port-var", default=VarNames.port, show_default=True,
              help="Host variable naming the switch port (optional per host).")
@click.option("--mac-var", default=VarNames.mac, show_default=True,
              help="Host variable holding the host's MAC (optional per host).")
@click.option("--interface-var", default=VarNames.interface, show_default=True,
              help="Host variable naming the host's interface (optional per host).")
@click.option("--mgmt-var", default=VarNames.mgmt, show_default=True,
              help="Switch variable holding its management address.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the YAML to this file instead of stdout.")
@json_option
@quiet_option(help="Print the YAML (it is the product: on stdout, or into -o FILE) and besides "
                   "it only warnings and errors (on stderr).")
def ansible(inventory: Path, host_groups: tuple[str, ...], switch_groups: tuple[str, ...], switch_var: str,
            port_var: str, mac_var: str, interface_var: str, mgmt_var: str, output: Path | None,
            as_json: bool, quiet: bool) -> int:
    """Print the hosts (hosts.list) and switches (mgmt) sections for INVENTORY's groups."""
    command = ansible_inventory_command()
    if command is not None:
        inv = run_ansible_inventory(inventory, command)       # Ansible's own reading, plugins included
    else:
        if not quiet:
            click.echo("note: ansible-inventory (ansible-core) not found: reading the file as a static "
                       "YAML/INI inventory; install the `ansible` extra for plugins and dynamic inventories",
                       err=True)
        inv = read_ansible_inventory(inventory)
    for note in inv.notes:              # skipped, never hidden: a needed variable may have been there
        click.echo(f"warning: {note}", err=True)
    result = to_vlanroute(inv, list(host_groups), list(switch_groups),
                          VarNames(switch_var, port_var, mac_var, interface_var, mgmt_var))
    if result.errors:
        shown = "\n  ".join(result.errors[:SHOWN_ERRORS])
        more = len(result.errors) - SHOWN_ERRORS
        raise UserError(f"{len(result.errors)} host(s) or switch(es) cannot be imported:\n  {shown}"
                        + (f"\n  ... and {more} more" if more > 0 else ""), file=str(inventory),
                        fix="set the variables named (host variables or group_vars), or choose them with "
                            "--switch-var/--mac-var/--port-var/--mgmt-var")
    if not result.hosts:
        raise UserError(f"the groups {', '.join(host_groups)} have no hosts", file=str(inventory),
                        fix="name the group of the cluster's hosts with --hosts-group")
    section: dict[str, object] = {"hosts": {"list": result.hosts}}
    if result.switches:
        section["switches"] = result.switches
    if as_json:
        from vlanroute.schemas.outputs import ImportDocument
        emit_document(ImportDocument.model_validate(
            {"source": str(inventory), "groups": list(host_groups) + list(switch_groups), **section}))
        return ExitCode.OK
    text = (f"# from the Ansible inventory {inventory} (groups: {', '.join(host_groups + switch_groups)})\n"
            + yaml.safe_dump(section, sort_keys=False, default_flow_style=None, width=120))
    if output is not None:
        write_output(output, text)
        if not quiet:
            click.echo(f"{output}: {len(result.hosts)} hosts, {len(result.switches)} switches", err=True)
    else:
        click.echo(text, nl=False)
    return ExitCode.OK


# `vlanroute import nautobot` (commands/nautobot.py): the whole fabric from a Nautobot server.
command.add_command(import_nautobot)
