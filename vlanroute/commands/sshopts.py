"""Options shared by `push` and `audit`: switch selection, host keys, workers, target map."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from collections.abc import Callable

import click

from vlanroute.device.session import HostKeyPolicy
from vlanroute.device.targets import TARGETS_ENV, TargetMap, read_target_map

INSECURE_FLAG = "--insecure-no-host-key-check"


def known_hosts_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--known-hosts", type=click.Path(dir_okay=False, path_type=Path),
                        envvar="VLANROUTE_KNOWN_HOSTS", show_envvar=True,
                        help="Extra known_hosts file, besides ~/.ssh/known_hosts.")(f)


def targets_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--targets", "targets_file", type=click.Path(dir_okay=False, path_type=Path),
                        envvar=TARGETS_ENV, show_envvar=True,
                        help="Target map: reach each switch at the address and port it gives "
                             "instead of plan.json's (written by `vlanroute lab up`).")(f)


_CONNECTION_KEY = "vlanroute.ssh"          # click context meta: the two options below


def _remember(ctx: click.Context, param: click.Parameter, value: object) -> object:
    ctx.meta.setdefault(_CONNECTION_KEY, {})[param.name] = value
    return value


def connection_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--ssh-config and --ssh-agent: the site's SSH conventions. Not passed to the command
    function (expose_value=False): host_key_policy() reads them, so every command that
    connects gets them without a parameter of its own."""
    f = click.option("--ssh-config", "ssh_config", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     envvar="VLANROUTE_SSH_CONFIG", show_envvar=True, expose_value=False, callback=_remember,
                     help="OpenSSH config file: Host aliases (HostName, Port, User), ProxyCommand and "
                          "one-hop ProxyJump, as netmiko reads them.")(f)
    f = click.option("--ssh-agent", "ssh_agent", is_flag=True, envvar="VLANROUTE_SSH_AGENT", show_envvar=True,
                     expose_value=False, callback=_remember,
                     help="Also offer the keys of the running ssh-agent (SSH_AUTH_SOCK).")(f)
    return f


def ssh_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = connection_options(f)
    f = click.option("--switch", "switches", multiple=True, metavar="NAME",
                     help="Only this switch (repeatable). Default: every switch in plan.json.")(f)
    f = known_hosts_option(f)
    f = targets_option(f)
    f = click.option(INSECURE_FLAG, "insecure", is_flag=True,
                     help="DANGEROUS: accept any SSH host key (a man-in-the-middle could then "
                          "read the password and change the switches).")(f)
    f = click.option("--workers", type=click.IntRange(1, 64), default=4, show_default=True,
                     help="Switches handled in parallel.")(f)
    return f


def target_map(path: Path | None, quiet: bool = False) -> TargetMap | None:
    if path is None:
        return None
    tm = read_target_map(path)
    if not quiet:               # a note, dropped by --quiet like every other
        click.echo(f"note: switches reached through the target map {path} "
                   f"({len(tm.switches)} switches), not plan.json's addresses", err=True)
    return tm


def host_key_policy(insecure: bool, known_hosts: Path | None) -> HostKeyPolicy:
    if insecure:
        click.secho(f"WARNING: {INSECURE_FLAG}: SSH host keys are NOT checked; anyone on the "
                    "path can impersonate the switches and capture the credentials.",
                    fg="red", bold=True, err=True)
    ctx = click.get_current_context(silent=True)
    chosen = ctx.meta.get(_CONNECTION_KEY, {}) if ctx is not None else {}
    return HostKeyPolicy(check=not insecure, known_hosts=known_hosts,
                         allow_agent=bool(chosen.get("ssh_agent")), ssh_config_file=chosen.get("ssh_config"))
