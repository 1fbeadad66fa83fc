"""`vlanroute lab up OUTDIR` / `lab env` / `lab down`: emulated switches for a rendered OUTDIR.

`lab up` starts one emulated switch per switch of OUTDIR's plan (vlanroute.lab: PowerConnect
62xx, Dell OS6, Arista EOS and Dell OS10: vlanroute.lab.server.EMULATED), each on its own 127.0.0.x address, in a background process that
outlives the command, optionally seeded with running configs (`--seed DIR` of
<switch>.cfg, or one file for all). It prints, on stdout, the environment push and audit
need: the SSH user and password of the emulated switches, the known_hosts file of their
host keys (VLANROUTE_KNOWN_HOSTS) and the target map that sends each switch of the plan
to its emulated twin (VLANROUTE_TARGETS; plan.json keeps the real addresses), so that

    eval "$(vlanroute lab up out)"
    vlanroute push out --dry-run

runs against the lab. `lab down` stops it and leaves each switch's last running config in
the state directory. The lab needs asyncssh: `pip install "vlanroute[lab]"`.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
import secrets
import shlex
import signal
import subprocess
import sys
import time

import click

from vlanroute.exitcodes import ExitCode

from vlanroute.bundle.reader import read_plan
from vlanroute.commands.output import emit_document, json_option, quiet_option
from vlanroute.device.credentials import ENV_PASSWORD, ENV_USER
from vlanroute.device.targets import TARGETS_ENV
from vlanroute.errors import UserError
from vlanroute.safeio.private import open_private

START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0


def _need_asyncssh() -> None:
    try:
        found = importlib.util.find_spec("asyncssh") is not None
    except ImportError:
        found = False
    if not found:
        raise UserError("the emulated switches need asyncssh, which is not installed",
                        fix='pip install "vlanroute[lab]"')


def _state(state_dir: Path | None):  # type: ignore[no-untyped-def]
    _need_asyncssh()
    from vlanroute.lab.statedir import StateDir, default_state_dir
    return StateDir(state_dir or default_state_dir())


def _variables(state, user: str, password: str | None) -> dict[str, str]:  # type: ignore[no-untyped-def]
    env = {ENV_USER: user}
    if password is not None:
        env[ENV_PASSWORD] = password
    env[TARGETS_ENV] = str(state.path / "targets.json")
    env["VLANROUTE_KNOWN_HOSTS"] = str(state.path / "known_hosts")
    return env


def _environment(state, user: str, password: str | None) -> list[str]:  # type: ignore[no-untyped-def]
    return [f"export {k}={shlex.quote(v)}" for k, v in _variables(state, user, password).items()]


def _span(hosts: list[str]) -> str:
    return hosts[0] if len(hosts) == 1 else f"{hosts[0]}-{hosts[-1]}"


STATE_OPTION = click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path),
                            help="Where the lab keeps its files (default: "
                                 "$XDG_STATE_HOME/vlanroute/lab or ~/.local/state/vlanroute/lab).")


@click.group("lab")
def command() -> None:
    """Emulated switches on 127.0.0.x for a rendered OUTDIR (PowerConnect 62xx, Dell OS6,
    Arista EOS, Dell OS10)."""


@command.command("up")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--seed", type=click.Path(exists=True, path_type=Path),
              help="Start from running configs: a directory of <switch>.cfg, or one file for all.")
@click.option("--cabling", "cabling", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The cables the switches' LLDP tables show, in the layout of cabling.csv "
                   "(default: OUTDIR/cabling.csv; edit a copy to try `vlanroute cabling check`).")
@STATE_OPTION
@json_option
@quiet_option(help="Print the environment (it is the product, for eval) and besides it only "
                   "warnings and errors (on stderr).")
def up(outdir: Path, seed: Path | None, cabling: Path | None, state_dir: Path | None, as_json: bool,
       quiet: bool) -> int:
    """Start the emulated switches and print the environment that points push and audit at
    them (use as: eval "$(vlanroute lab up OUTDIR)")."""
    state = _state(state_dir)
    doc = read_plan(outdir)                 # validated before anything starts
    state.ensure()
    # One `lab up` at a time per state directory, from the check below until the daemon is
    # ready: two at once would both find no lab, and the second would remove the first's
    # lab.json, leaving its daemon serving SSH with nothing to stop it (`lab down`).
    from vlanroute.lab.statedir import UP_LOCK
    held = state.lock(UP_LOCK)
    if held is None:
        raise UserError(f"another `vlanroute lab up` (process {state.holder(UP_LOCK)}) is starting a lab in "
                        "this state directory", file=str(state.path),
                        fix="wait for it, then use its lab (`vlanroute lab env`), or give this one its own --state-dir")
    try:
        return _up(state, state_dir, outdir, doc, seed, cabling, as_json, quiet)
    finally:
        os.close(held)


def _up(state, state_dir: Path | None, outdir: Path, doc, seed: Path | None,  # type: ignore[no-untyped-def]
        cabling: Path | None, as_json: bool, quiet: bool) -> int:
    running = state.running_pid()
    if running is not None:
        lab = state.lab() or {}
        raise UserError(f"a lab is already running (process {running}, for {lab.get('outdir')})",
                        file=str(state.path), fix="stop it first: vlanroute lab down"
                        + (f" --state-dir {state.path}" if state_dir else ""))
    # A new lab starts with every cable plugged in (vlanroute.lab.linkdown).
    state.remove("ready", "error", "lab.json", "targets.json", "known_hosts", "cables-down.json",
                 "cables-down.applied")
    user = os.environ.get(ENV_USER) or "admin"
    given = os.environ.get(ENV_PASSWORD)
    password = given or secrets.token_urlsafe(12)
    log = os.fdopen(open_private(state.path / "lab.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, "lab log"), "ab")
    cmd = [sys.executable, "-m", "vlanroute.lab.daemon", "--state-dir", str(state.path),
           "--outdir", str(outdir.resolve()), "--user", user]
    if seed is not None:
        cmd += ["--seed", str(seed.resolve())]
    if cabling is not None:
        cmd += ["--cabling", str(cabling.resolve())]
    from vlanroute.lab.statedir import PASSWORD_ENV
    env = {**os.environ, PASSWORD_ENV: password}
    env.pop(ENV_PASSWORD, None)
    try:
        child = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 start_new_session=True, close_fds=True, env=env)
    finally:
        log.close()
    deadline = time.monotonic() + START_TIMEOUT_S
    while state.read("ready") is None:
        error = state.read("error")
        if error is not None or child.poll() is not None:
            state.remove("error")
            raise UserError(f"the lab did not start: {error or 'see ' + str(state.path / 'lab.log')}",
                            file=str(outdir), fix="fix what is named, then run `vlanroute lab up` again")
        if time.monotonic() > deadline:
            child.terminate()
            raise UserError("the lab did not start within "
                            f"{START_TIMEOUT_S:.0f} s", file=str(state.path / "lab.log"))
        time.sleep(0.05)
    lab = state.lab() or {}
    switches = lab.get("switches", {})
    assert isinstance(switches, dict)
    hosts = [v["host"] for v in switches.values()]
    kinds = sorted({v["platform"] for v in switches.values()})
    notes = [f"lab: {len(switches)} emulated switches ({', '.join(kinds)}) for plan {doc.name} on "
             f"{_span(hosts)}, process {child.pid}",
             f"lab: push and audit reach them through {TARGETS_ENV} (plan.json is unchanged); "
             "stop them with `vlanroute lab down`"]
    if seed is not None:
        notes.append(f"lab: seeded from {seed}")
    if cabling is not None:
        notes.append(f"lab: LLDP tables show the cables of {cabling}")
    if not quiet:
        for note in notes:
            click.echo(note, err=True)
    if as_json:
        from vlanroute.schemas.outputs import LabUpDocument
        emit_document(LabUpDocument.model_validate({
            "plan": doc.name, "pid": child.pid, "state_dir": str(state.path),
            "switches": {name: {"host": v["host"], "port": v.get("port"), "platform": v["platform"]}
                         for name, v in switches.items()},
            "environment": _variables(state, user, None if given else password)}))
        return ExitCode.OK
    for line in _environment(state, user, None if given else password):
        click.echo(line)
    return ExitCode.OK


@command.command("env")
@STATE_OPTION
def env(state_dir: Path | None) -> int:
    """Print the environment of the running lab again (the password only where you set it)."""
    state = _state(state_dir)
    lab = state.lab()
    if state.running_pid() is None or lab is None:
        raise UserError("no lab is running", file=str(state.path), fix="vlanroute lab up OUTDIR")
    for line in _environment(state, str(lab.get("user", "admin")), None):
        click.echo(line)
    click.echo(f"# {ENV_PASSWORD}: as printed by `vlanroute lab up` (not stored)", err=True)
    return ExitCode.OK


@command.command("down")
@STATE_OPTION
@json_option
@quiet_option
def down(state_dir: Path | None, as_json: bool, quiet: bool) -> int:
    """Stop the emulated switches; their last running configs stay in the state directory."""
    state = _state(state_dir)
    pid = state.running_pid()
    if pid is None:
        state.remove("ready", "lab.json", "targets.json", "known_hosts")
        if not quiet:
            click.echo("lab: no lab was running", err=True)
        if as_json:
            from vlanroute.schemas.outputs import LabDownDocument
            emit_document(LabDownDocument(stopped=0, state_dir=str(state.path)))
        return ExitCode.OK
    lab = state.lab() or {}
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    from vlanroute.lab.statedir import daemon_alive
    while daemon_alive(pid):
        if time.monotonic() > deadline:
            raise UserError(f"the lab (process {pid}) did not stop within {STOP_TIMEOUT_S:.0f} s",
                            fix=f"kill {pid}")
        time.sleep(0.05)
    count = len(lab.get("switches", {}))  # type: ignore[arg-type]
    if not quiet:
        click.echo(f"lab: stopped {count} emulated switches; their last running configs are in "
                   f"{state.path / 'running'}", err=True)
    if as_json:
        from vlanroute.schemas.outputs import LabDownDocument
        emit_document(LabDownDocument(stopped=count, state_dir=str(state.path)))
    return ExitCode.OK


CABLE_WAIT_S = 10.0


def _set_cables(state_dir: Path | None, ends: tuple[str, ...], pairs: tuple[str, ...], down: bool,
                as_json: bool, quiet: bool) -> int:
    """Add the named cables' ends to the lab's list of ends that are down (or take them off
    it), then wait until the daemon's switches show it (vlanroute.lab.linkdown)."""
    from vlanroute.bundle.reader import read_all_cables
    from vlanroute.lab import linkdown
    state = _state(state_dir)
    lab = state.lab()
    if state.running_pid() is None or lab is None:
        raise UserError("no lab is running", file=str(state.path), fix="vlanroute lab up OUTDIR")
    if not ends and not pairs:
        raise UserError("no cable named", field="CABLE", fix="name SWITCH:PORT (either end) or --pair SW1:SW2")
    outdir = Path(str(lab["outdir"]))
    doc = read_plan(outdir)
    cabling = lab.get("cabling")
    cables = read_all_cables(outdir, doc.switches, hosts=doc.hosts,
                             path=Path(str(cabling)) if cabling else None)
    pair_list = []
    for text in pairs:
        a, _, b = text.partition(":")
        if not a or not b:
            raise UserError(f"'{text}' is not a neighbour pair", field="--pair", fix="write SW1:SW2")
        pair_list.append((a, b))
    chosen = linkdown.cables_of(cables, [linkdown.parse_end(e) for e in ends], pair_list)
    now = linkdown.load(state.read(linkdown.DOWN_FILE), str(state.path / linkdown.DOWN_FILE))
    touched = {end for c in chosen for end in c.ends()}
    wanted = linkdown.dump(now | touched if down else now - touched)
    state.write(linkdown.DOWN_FILE, wanted)
    deadline = time.monotonic() + CABLE_WAIT_S
    while state.read(linkdown.APPLIED_FILE) != wanted:
        if time.monotonic() > deadline:
            raise UserError(f"the lab did not take the change within {CABLE_WAIT_S:.0f} s",
                            file=str(state.path / "lab.log"))
        time.sleep(0.05)
    if as_json:
        from vlanroute.schemas.outputs import LabCable, LabCableDocument
        emit_document(LabCableDocument(
            action="cable-down" if down else "cable-up", state_dir=str(state.path),
            cables=[LabCable(a=c.a, a_port=c.a_port, b=c.b, b_port=c.b_port) for c in chosen],
            ends_down=len(linkdown.load(wanted))))
    elif not quiet:
        for c in chosen:
            click.echo(f"lab: cable {c.a} {c.a_port} - {c.b} {c.b_port} {'down' if down else 'up'} "
                       f"(LLDP {'lost' if down else 'heard'} at both ends, link {'down' if down else 'up'})",
                       err=True)
    return ExitCode.OK


CABLE_ARGS = click.argument("ends", nargs=-1, metavar="[SWITCH:PORT]...")
PAIR_OPTION = click.option("--pair", "pairs", multiple=True, metavar="SW1:SW2",
                           help="Every cable between these two switches (a whole neighbour pair or LAG).")


@command.command("cable-down")
@CABLE_ARGS
@PAIR_OPTION
@STATE_OPTION
@json_option
@quiet_option
def cable_down(ends: tuple[str, ...], pairs: tuple[str, ...], state_dir: Path | None, as_json: bool,
               quiet: bool) -> int:
    """Take inter-switch cables down, named by either end (SWITCH:PORT) or by --pair: their
    switches stop hearing each other over LLDP and report the ports' link down."""
    return _set_cables(state_dir, ends, pairs, True, as_json, quiet)


@command.command("cable-up")
@CABLE_ARGS
@PAIR_OPTION
@STATE_OPTION
@json_option
@quiet_option
def cable_up(ends: tuple[str, ...], pairs: tuple[str, ...], state_dir: Path | None, as_json: bool,
               quiet: bool) -> int:
    """Plug cables taken down by `lab cable-down` back in."""
    return _set_cables(state_dir, ends, pairs, False, as_json, quiet)
