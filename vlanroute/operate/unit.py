"""The systemd unit that runs `vlanroute watch OUTDIR` as a service.

Written by `vlanroute watch OUTDIR --install-unit DIR` (printed by `--print-unit`), not
rendered into the bundle: the unit holds facts of the management host (the absolute OUTDIR,
the state directory, the Python that has vlanroute, the credentials file, the user), not of
the plan, and a bundle stays a set of files that can be copied anywhere, checked by its
manifest; the repaired bundles the watcher writes would otherwise carry units of their own.

The credentials come from an EnvironmentFile (`VLANROUTE_SSH_USER=`, `VLANROUTE_SSH_PASSWORD=`
or `VLANROUTE_SSH_KEY=`, and `VLANROUTE_KNOWN_HOSTS=`), readable by root only: never from the
inventory, the unit or the command line. `Restart=on-failure` brings a crashed watcher back,
and it resumes from its journal; exit code 2 (a usage error, or another watcher of the same
fabric) is not restarted. SIGTERM (`systemctl stop`) lets an action under way finish first.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from vlanroute.errors import UserError

# Paths written into the unit unquoted: nothing systemd reads specially (%, $, quotes, \, spaces).
_SAFE_PATH = re.compile(r"^/[A-Za-z0-9._/+@:,=-]*$")
_SAFE_USER = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")


def unit_name(plan: str) -> str:
    return f"vlanroute-watch-{plan}.service"


def _path(value: Path, what: str, option: str) -> str:
    text = str(value)
    if not _SAFE_PATH.fullmatch(text):
        raise UserError(f"the {what} {text!r} cannot be written into a systemd unit as it is", field=option,
                        fix="use an absolute path of letters, digits and . _ / + @ : , = - only (no spaces, %, $ or quotes)")
    return text


def unit_text(*, plan: str, outdir: Path, state_dir: Path, env_file: Path, python: Path | None = None,
              user: str | None = None, events: Path | None = None) -> str:
    python = python or Path(sys.executable)
    if user is not None and not _SAFE_USER.fullmatch(user):
        raise UserError(f"{user!r} is not a user name systemd takes here", field="--unit-user",
                        fix="a lower-case login name, e.g. vlanroute")
    exec_start = " ".join([_path(python, "Python interpreter", "--install-unit"), "-m", "vlanroute.cli", "watch",
                           _path(outdir, "OUTDIR", "OUTDIR"), "--state-dir", _path(state_dir, "state directory",
                                                                                  "--state-dir")]
                          + (["--events", _path(events, "events file", "--events")] if events else []))
    lines = [
        f"# vlanroute watch of the fabric {plan}: written by `vlanroute watch {outdir} --install-unit`;",
        "# see docs/watch.md. The credentials are in the EnvironmentFile (root-only), never here.",
        "[Unit]",
        f"Description=vlanroute watcher of the fabric {plan}",
        "After=network-online.target",
        "Wants=network-online.target",
        "",
        "[Service]",
        "Type=simple",
        f"EnvironmentFile={_path(env_file, 'environment file', '--env-file')}",
        f"ExecStart={exec_start}",
        *( [f"User={user}"] if user else []),
        "Restart=on-failure",
        "RestartSec=10s",
        "RestartPreventExitStatus=2",
        # An action under way (a push: minutes on a large fabric) finishes after SIGTERM;
        # if it does not in time, SIGKILL, and the next start resumes from the journal.
        "TimeoutStopSec=900",
        "KillMode=mixed",
        "UMask=0077",
        "NoNewPrivileges=yes",
        "PrivateTmp=yes",
        "ProtectSystem=full",
        "SyslogIdentifier=vlanroute-watch",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ]
    return "\n".join(lines)
