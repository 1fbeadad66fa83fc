"""The background process of `vlanroute lab up`: emulated switches for a rendered OUTDIR.

Started by vlanroute.commands.lab in a session of its own, so it outlives the command;
stopped by `vlanroute lab down` (SIGTERM). Everything it shares lives in its state
directory (vlanroute.lab.statedir): `lab.json` (process, OUTDIR, switches), `targets.json`
(the target map push and audit read through VLANROUTE_TARGETS), `known_hosts`, `lab.log`,
and, once stopped, `running/<switch>.cfg` (each switch's last running config). The SSH
password comes in the environment (VLANROUTE_LAB_PASSWORD), never in a file or argument.
The switches' LLDP tables show the cables of OUTDIR/cabling.csv, or of `--cabling FILE`.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
import signal
import sys
import threading

from vlanroute.bundle.platforms import resolve_platforms
from vlanroute.bundle.reader import host_macs, read_all_cables, read_plan
from vlanroute.device.targets import TARGETS_FORMAT
from vlanroute.errors import UserError
from vlanroute.lab import linkdown
from vlanroute.lab.server import EMULATED, FakeSwitchFarm, SeedError
from vlanroute.lab.statedir import DAEMON_LOCK, PASSWORD_ENV, StateDir
from vlanroute.natural import natsorted
from vlanroute.safeio.reading import read_text_file

FIRST_HOST = 11     # 127.0.0.11, .12, ...: the tests use their own addresses and ports


def lab_address(i: int) -> str:
    """The i-th switch's loopback address (0-based): 127.0.0.11 .. 127.0.0.254, 127.0.1.11 ..."""
    per = 254 - FIRST_HOST + 1
    return f"127.0.{i // per}.{FIRST_HOST + i % per}"


def seed_texts(seed: Path | None, switches: list[str]) -> dict[str, str]:
    """`--seed DIR`: DIR/<switch>.cfg where it exists; `--seed FILE`: that file for all."""
    if seed is None:
        return {}
    if seed.is_dir():
        return {sw: read_text_file(seed / f"{sw}.cfg", what="seed config", field="--seed")
                for sw in switches if (seed / f"{sw}.cfg").is_file()}
    text = read_text_file(seed, what="seed config", field="--seed",
                          fix="give a running config file, or a folder of <switch>.cfg files")
    return {sw: text for sw in switches}


def start(outdir: Path, state: StateDir, user: str, password: str, seed: Path | None,
          cabling: Path | None = None) -> FakeSwitchFarm:
    """Start one emulated switch per switch of OUTDIR's plan, their LLDP tables showing the
    cables of `cabling` (default OUTDIR/cabling.csv), and write the state files."""
    doc = read_plan(outdir)
    platforms = resolve_platforms(doc, source=str(outdir / "plan.json")).by_switch
    names = natsorted(doc.switches)
    other = [f"{n} ({platforms[n].family})" for n in names if platforms[n].family not in EMULATED]
    if other:
        raise UserError(f"no emulated switch for {', '.join(other)}", file=str(outdir / "plan.json"),
                        fix="the lab emulates the families " + ", ".join(sorted(EMULATED)))
    seeds = seed_texts(seed, names)
    cables = read_all_cables(outdir, doc.switches, hosts=doc.hosts, path=cabling)
    farm = FakeSwitchFarm()
    try:
        for i, name in enumerate(names):
            farm.add(name, host=lab_address(i), username=user, password=password,
                     platform=platforms[name], seed=seeds.get(name))
    except (SeedError, OSError):
        farm.close()
        raise
    farm.wire(cables, host_macs(doc))
    farm.learn_hosts(v.id for v in doc.vlans)     # audit can be rehearsed (vlanroute.lab.learning)
    targets = {"format": TARGETS_FORMAT, "plan": doc.name, "outdir": str(outdir.resolve()),
               "switches": {n: {"host": sw.host, "port": sw.port} for n, sw in farm.switches.items()}}
    state.write("targets.json", json.dumps(targets, indent=1) + "\n")
    farm.write_known_hosts(state.path / "known_hosts")
    state.write("lab.json", json.dumps({
        "pid": os.getpid(), "outdir": str(outdir.resolve()), "plan": doc.name, "user": user,
        "cabling": None if cabling is None else str(cabling.resolve()),
        "switches": {n: {"host": sw.host, "port": sw.port, "platform": sw.platform.name}
                     for n, sw in farm.switches.items()}}, indent=1) + "\n")
    return farm


def follow_cables_down(farm: FakeSwitchFarm, state: StateDir, outdir: Path, cabling: Path | None,
                       stop: threading.Event, poll_s: float = 0.1) -> None:
    """Until stopped: when `vlanroute lab cable-down` / `cable-up` rewrites the list of cable
    ends that are down, wire the switches with the other cables only, then acknowledge."""
    doc = read_plan(outdir)
    cables = read_all_cables(outdir, doc.switches, hosts=doc.hosts, path=cabling)
    macs = host_macs(doc)
    applied: str | None = None
    refused: str | None = None          # the last request not applied, logged once
    where = str(state.path / linkdown.DOWN_FILE)
    while not stop.wait(poll_s):
        # A damaged request (edited by hand, a FIFO, unreadable) is logged and left
        # unapplied: the switches keep their cables, the lab keeps running, and `lab
        # cable-down` names the file and the fix.
        problem: UserError | None = None
        try:
            text = state.read(linkdown.DOWN_FILE) or ""
        except UserError as exc:
            text, problem = exc.render(), exc
        if text in (applied, refused):
            continue
        try:
            if problem is not None:
                raise problem
            ends = linkdown.load(text, where)
        except UserError as exc:
            print(f"lab: cable request not applied: {exc.render()}", file=sys.stderr, flush=True)
            refused = text
            continue
        farm.wire(linkdown.plugged(cables, ends), macs)
        applied = text
        try:
            state.write(linkdown.APPLIED_FILE, text)
        except UserError as exc:
            print(f"lab: {exc.render()}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vlanroute.lab.daemon")
    ap.add_argument("--state-dir", type=Path, required=True)
    ap.add_argument("--outdir", type=Path, required=True)
    ap.add_argument("--user", required=True)
    ap.add_argument("--seed", type=Path)
    ap.add_argument("--cabling", type=Path)
    args = ap.parse_args(argv)
    state = StateDir(args.state_dir)
    password = os.environ.pop(PASSWORD_ENV, "")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        # Held for the daemon's life: a second daemon in this directory (two `lab up` at once,
        # one of them killed while starting) stops here instead of serving SSH unseen.
        held = state.lock(DAEMON_LOCK)
        if held is None:
            raise UserError(f"another lab daemon (process {state.holder(DAEMON_LOCK)}) runs in this state "
                            "directory", file=str(state.path),
                            fix="stop it with `vlanroute lab down`, or give this lab its own --state-dir")
        farm = start(args.outdir, state, args.user, password, args.seed, args.cabling)
    except (UserError, SeedError, OSError) as exc:
        try:
            state.write("error", exc.render() if isinstance(exc, UserError) else str(exc))
        except UserError as why:             # a read-only state directory: the log has it
            print(f"lab: {exc}; and the error file could not be written: {why.message}", file=sys.stderr)
        return 2
    state.write("ready", "")
    try:
        follow_cables_down(farm, state, args.outdir, args.cabling, stop)
    finally:
        for name, sw in farm.switches.items():
            state.write_running(name, sw.running_config())
        farm.close()
        state.remove("ready", "targets.json", "known_hosts", "lab.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
