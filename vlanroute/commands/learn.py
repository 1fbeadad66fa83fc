"""`vlanroute learn`: send the MAC-learning broadcasts (called by hosts/<host>.sh)."""

from __future__ import annotations

import click

from vlanroute.exitcodes import ExitCode

from vlanroute import names as safe_names
from vlanroute.errors import UserError, VerificationError
from vlanroute.hostside.broadcast import learn


@click.command("learn")
@click.option("--interface", "-i", required=True, help="Parent interface, e.g. eth0.")
@click.option("--raw", is_flag=True,
              help="Send 802.1Q-tagged frames from a raw socket on the interface (no sub-interfaces needed).")
@click.option("--splay", type=click.IntRange(0, 86400), default=0, show_default=True,
              help="Wait a random 0..SPLAY seconds first, so that hosts do not all send at once.")
@click.argument("vlans", nargs=-1, required=True, type=click.IntRange(1, 4094))
def command(interface: str, raw: bool, splay: int, vlans: tuple[int, ...]) -> int:
    """Send one learning broadcast per VLAN id in VLANS (needs root).

    Without --raw the frames leave through the VLAN sub-interfaces INTERFACE.V that the
    host script creates; with --raw they are tagged here and need no sub-interface.
    """
    try:
        safe_names.iface(interface, "--interface")
    except VerificationError:
        raise UserError(f"'{interface}' is not a valid interface name", field="--interface",
                        fix="use a name like eth0 (letters, digits, _ and -, at most 10 characters)") from None
    learn(interface, sorted(set(vlans)), raw=raw, splay_s=splay)
    return ExitCode.OK
