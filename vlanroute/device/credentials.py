"""SSH credentials for push and audit: from the environment or an interactive prompt.

Never from the inventory or plan (they are files that get copied and committed), and never
printed: the repr hides the secret, and nothing in vlanroute logs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import os
from pathlib import Path
import sys

import click

from vlanroute.device.logsecrets import register_secret
from vlanroute.errors import UserError

ENV_USER = "VLANROUTE_SSH_USER"
ENV_PASSWORD = "VLANROUTE_SSH_PASSWORD"
ENV_KEY = "VLANROUTE_SSH_KEY"


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str | None = field(default=None, repr=False)
    key_file: Path | None = None

    def __repr__(self) -> str:
        secret = "<hidden>" if self.password else "None"
        return f"Credentials(username={self.username!r}, password={secret}, key_file={self.key_file})"

    __str__ = __repr__


def load_credentials(*, interactive: bool | None = None) -> Credentials:
    """User from VLANROUTE_SSH_USER, password from VLANROUTE_SSH_PASSWORD, private key path
    from VLANROUTE_SSH_KEY; whatever is missing is asked for on a terminal."""
    if interactive is None:
        interactive = sys.stdin.isatty()
    username = os.environ.get(ENV_USER) or None
    password = os.environ.get(ENV_PASSWORD) or None
    key_text = os.environ.get(ENV_KEY) or None
    key_file = Path(key_text).expanduser() if key_text else None
    if key_file is not None and not key_file.is_file():
        raise UserError(f"SSH key file {key_file} does not exist", field=ENV_KEY,
                        fix=f"set {ENV_KEY} to the path of a private key file, or unset it")
    if username is None:
        if not interactive:
            raise UserError("no SSH user name", field=ENV_USER,
                            fix=f"export {ENV_USER}=<user> (and {ENV_PASSWORD} or {ENV_KEY}), "
                                "or run on a terminal to be asked")
        username = click.prompt("SSH user", err=True)
    if password is None and key_file is None:
        if not interactive:
            raise UserError("no SSH password and no SSH key", field=ENV_PASSWORD,
                            fix=f"export {ENV_PASSWORD}=... or {ENV_KEY}=<path to private key>, "
                                "or run on a terminal to be asked")
        password = click.prompt(f"SSH password for {username}", hide_input=True, err=True)
    register_secret(password)              # masked in every log (device/logsecrets.py)
    return Credentials(username=username, password=password, key_file=key_file)
