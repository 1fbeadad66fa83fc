"""Read every switch's port link state over SSH (read-only: one show command per switch),
for `vlanroute repair --from-link-state`, and again and again over one session kept open
(`LinkReader`, for `vlanroute watch`). The family's command and table: drivers/linkstate.py.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from vlanroute.device.credentials import Credentials
from vlanroute.device.lldp import escape_controls
from vlanroute.device.session import HostKeyPolicy, SessionError, SwitchSession
from vlanroute.device.targets import Target
from vlanroute.drivers.linkstate import link_state_command, parse_link_state

# switch -> port -> up, or switch -> why its state could not be read
LinkStates = tuple[dict[str, dict[str, bool]], dict[str, str]]


def read_one(target: Target, creds: Credentials, host_keys: HostKeyPolicy,
             connect: Any = SwitchSession) -> dict[str, bool] | str:
    command = link_state_command(target.family)
    if command is None:
        return f"no link state reader for {target.family.title} yet"
    try:
        session = connect(target.cli, target.host, target.port, creds, host_keys)
    except SessionError as exc:
        return escape_controls(str(exc))
    try:
        session.run("end", check=False)
        state = parse_link_state(target.family, session.run(command))
        return state if state else f"`{command}` listed no port"
    except SessionError as exc:
        return escape_controls(str(exc))
    finally:
        session.close()


class LinkReader:
    """One switch's link states, read over a session kept open between reads (a watcher
    reads every few seconds: a login per read would cost more than the read). A read that
    fails closes the session; the next read logs in again. Not thread-safe: one caller."""

    def __init__(self, target: Target, creds: Credentials, host_keys: HostKeyPolicy,
                 connect: Any = SwitchSession) -> None:
        self.target, self.creds, self.host_keys, self._connect = target, creds, host_keys, connect
        self.command = link_state_command(target.family)
        self._session: Any = None

    def read(self) -> dict[str, bool] | str:
        """Port -> up, or why the state could not be read."""
        if self.command is None:
            return f"no link state reader for {self.target.family.title} yet"
        try:
            if self._session is None:
                self._session = self._connect(self.target.cli, self.target.host, self.target.port, self.creds,
                                              self.host_keys)
                self._session.run("end", check=False)
            state = parse_link_state(self.target.family, self._session.run(self.command))
        except SessionError as exc:
            self.close()
            return escape_controls(str(exc))
        return state if state else f"`{self.command}` listed no port"

    def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            try:
                session.close()
            except Exception:  # noqa: BLE001 - a dead session may fail to close; it is dropped either way
                pass


def read_link_states(targets: list[Target], creds: Credentials, host_keys: HostKeyPolicy, workers: int,
                     connect: Any = SwitchSession) -> LinkStates:
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        got = list(pool.map(lambda t: read_one(t, creds, host_keys, connect), targets))
    states: dict[str, dict[str, bool]] = {}
    errors: dict[str, str] = {}
    for t, r in zip(targets, got):
        if isinstance(r, str):
            errors[t.name] = r
        else:
            states[t.name] = r
    return states, errors
