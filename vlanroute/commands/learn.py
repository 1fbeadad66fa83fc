"""`vlanroute learn`: send the MAC-learning broadcasts (called by hosts/vlanroute-host when the
bundle was rendered with --learning-method ip-link, vconfig or raw); also runs as
`python -m vlanroute.commands.learn` without importing the whole CLI (the emulation does)."""

from __future__ import annotations

import click

from vlanroute import names as safe_names
from vlanroute.errors import UserError, VerificationError
from vlanroute.hostside.broadcast import learn


@click.command("learn")
@click.option("--interface", "-i", required=True, help="Parent interface, e.g. eth0.")
@click.option("--prefix", default=None,
              help="The sub-interfaces are PREFIX+VLAN (e.g. vr101) instead of INTERFACE.VLAN.")
@click.option("--raw", is_flag=True,
              help="Send 802.1Q-tagged frames from a raw socket on the interface (no sub-interfaces needed).")
@click.option("--splay", type=click.IntRange(0, 86400), default=0, show_default=True,
              help="Wait a random 0..SPLAY seconds first, so that hosts do not all send at once.")
@click.argument("vlans", nargs=-1, required=True, type=click.IntRange(1, 4094))
def command(interface: str, prefix: str | None, raw: bool, splay: int, vlans: tuple[int, ...]) -> int:
    """Send one learning broadcast per VLAN id in VLANS (needs root).

    Without --raw the frames leave through the VLAN sub-interfaces (PREFIX+V, or
    INTERFACE.V without --prefix) that the host program creates; with --raw they are
    tagged here and need no sub-interface.
    """
    for value, option in ((interface, "--interface"), (prefix, "--prefix")):
        if value is None:
            continue
        try:
            safe_names.iface(value, option)
        except VerificationError:
            raise UserError(f"'{value}' is not a valid interface name", field=option,
                            fix="use a name like eth0 (letters, digits, _ and -, at most 15 characters)") from None
    learn(interface, sorted(set(vlans)), raw=raw, splay_s=splay, prefix=prefix)
    return 0


if __name__ == "__main__":
    # `python -m vlanroute.commands.learn ...` = `vlanroute learn ...` without importing the
    # whole CLI (matplotlib among it): the emulation passes it to the host scripts as
    # VLANROUTE, so each emulated host runs the very same command, seconds faster under QEMU
    # TCG. The host script calls `$VLANROUTE learn --interface ...`: drop the sub-command word.
    import sys

    from vlanroute.commands.runner import run_command

    args = sys.argv[1:]
    if args[:1] == ["learn"]:
        args = args[1:]
    sys.exit(run_command(command, args))
