"""`vlanroute watch OUTDIR`: follow the fabric of a published plan, heal it, bring it back to
the plan (docs/watch.md; vlanroute/operate/)."""

from __future__ import annotations

import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import click

from vlanroute.bundle.manifest import require_intact
from vlanroute.bundle.reader import PLAN_FILE, read_plan
from vlanroute.commands.sshopts import INSECURE_FLAG, connection_options, host_key_policy, known_hosts_option, \
    target_map, targets_option
from vlanroute.commands.output import emit_document, json_option, quiet_option
from vlanroute.commands.stateopts import state_dir_option
from vlanroute.device.credentials import load_credentials
from vlanroute.device.journal import sha256_text
from vlanroute.device.statedir import FabricState
from vlanroute.device.targets import check_loopback, select_targets
from vlanroute.errors import UserError
from vlanroute.exitcodes import ExitCode
from vlanroute.safeio.reading import read_text_file

if TYPE_CHECKING:
    from vlanroute.bundle.document import PlanDocument
    from vlanroute.device.session import HostKeyPolicy
    from vlanroute.device.targets import Target
    from vlanroute.operate.policy import WatchPolicy

OPTION_OF = {"policy": "--policy", "interval_s": "--interval", "debounce_polls": "--debounce-polls",
             "debounce_s": "--debounce", "hold_down_s": "--hold-down", "notify": "--notify",
             "syslog_listen": "--syslog-listen", "audit": "--no-audit"}


@click.command("watch")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@state_dir_option
@known_hosts_option
@targets_option
@click.option(INSECURE_FLAG, "insecure", is_flag=True,
              help="DANGEROUS: accept any SSH host key (a man-in-the-middle could then read the password "
                   "and change the switches).")
@click.option("--workers", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Switches changed in parallel by a push the watcher makes.")
@connection_options
@click.option("--policy", type=click.Choice(["auto", "propose"]),
              help="auto: push the repair (and the return to the plan) itself; propose: write it and notify. "
                   "Default: plan.json's operation.watch.policy, else propose.")
@click.option("--interval", "interval_s", type=float, metavar="SECONDS", help="Seconds between link-state reads.")
@click.option("--debounce-polls", type=int, metavar="N", help="Reads in a row a port must be down to count.")
@click.option("--debounce", "debounce_s", type=float, metavar="SECONDS",
              help="Seconds a port must be down to count (as well as --debounce-polls).")
@click.option("--hold-down", "hold_down_s", type=float, metavar="SECONDS",
              help="Seconds a port that came back must stay up before it counts as back.")
@click.option("--notify", metavar="COMMAND",
              help="Run COMMAND (an absolute path and its arguments, no shell) with each event as JSON on stdin.")
@click.option("--syslog-listen", metavar="ADDRESS:PORT",
              help="Also listen for link-down syslog messages (UDP) as a hint to read the links at once.")
@click.option("--no-audit", is_flag=True, help="Do not audit the MAC tables after a push.")
@click.option("--once", is_flag=True,
              help="Read the links until they have settled, act once if the failures call for it, then exit "
                   "(0 the fabric is set up for what the links show, 1 not: proposed, refused or failed; 3, 4 as push).")
@click.option("--events", "events_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Also append the structured log (JSON lines) to FILE (0600).")
@click.option("--print-unit", is_flag=True, help="Print the systemd unit that runs this watcher, and exit.")
@click.option("--install-unit", "unit_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Write the systemd unit into DIR (e.g. /etc/systemd/system), and exit.")
@click.option("--env-file", type=click.Path(dir_okay=False, path_type=Path),
              help="The unit's EnvironmentFile with the SSH credentials (default /etc/vlanroute/<plan>.env).")
@click.option("--unit-user", metavar="USER", help="Run the unit as USER (who owns the state directory).")
@click.option("--force", is_flag=True, help="--install-unit: replace an existing unit file.")
@json_option(doc="docs/watch.md")
@quiet_option(help="Print only the events a person must see (heal-failed, needs-person, gave-up, unreachable, "
                   "flapping, notify-failed, journal-failed, plan-changed) on stderr; --events FILE gets every one.")
def command(outdir: Path, state_dir: Path | None, known_hosts: Path | None, targets_file: Path | None, insecure: bool,
            workers: int, policy: str | None, interval_s: float | None, debounce_polls: int | None,
            debounce_s: float | None, hold_down_s: float | None, notify: str | None, syslog_listen: str | None,
            no_audit: bool, once: bool, events_file: Path | None, print_unit: bool, unit_dir: Path | None,
            env_file: Path | None, unit_user: str | None, force: bool, as_json: bool, quiet: bool) -> int:
    """Watch the inter-switch links of the plan in OUTDIR and heal a dead pair or switch.

    Reads every switch's link states over SSH sessions it keeps open, every --interval
    seconds; a port counts as down after --debounce-polls reads and --debounce seconds, and
    as back after --hold-down seconds up. When the failures change, it writes the minimal
    repair (as `vlanroute repair`) under the state directory and, under the `auto` policy,
    pushes it as `vlanroute push --yes` does (loop-free transition, journal, states), then
    audits; under `propose` it notifies with the commands to run. When the failure is gone,
    it goes back to the published plan the same way. One watcher per fabric; restart-safe
    (its journal: <state dir>/watch/journal.jsonl). Logs: JSON lines on stderr.
    """
    doc = read_plan(outdir)
    outdir = outdir.resolve()
    state = FabricState.choose(state_dir.resolve() if state_dir else None, doc.name, outdir)
    if print_unit or unit_dir is not None:
        return _unit(outdir, state, doc.name or outdir.name, env_file, unit_user, events_file, print_unit, unit_dir,
                     force)
    require_intact(outdir, "watch", "--skip-manifest-check to a `vlanroute push` by hand (the watcher takes only "
                                    "an intact bundle)")
    state.ensure()
    from vlanroute.operate.lock import lock_watcher
    lock = lock_watcher(state)                  # before anything else: one watcher per fabric
    try:
        return _start(outdir, doc, state, policy, interval_s, debounce_polls, debounce_s, hold_down_s, notify,
                      syslog_listen, no_audit, targets_file, insecure, known_hosts, workers, events_file, once,
                      as_json, quiet)
    finally:
        lock.release()


def _start(outdir: Path, doc: PlanDocument, state: FabricState, policy: str | None, interval_s: float | None,
           debounce_polls: int | None, debounce_s: float | None, hold_down_s: float | None, notify: str | None,
           syslog_listen: str | None, no_audit: bool, targets_file: Path | None, insecure: bool,
           known_hosts: Path | None, workers: int, events_file: Path | None, once: bool, as_json: bool,
           quiet: bool) -> int:
    from vlanroute.operate.policy import WatchPolicy
    overrides = {"policy": policy, "interval_s": interval_s, "debounce_polls": debounce_polls,
                 "debounce_s": debounce_s, "hold_down_s": hold_down_s, "notify": notify,
                 "syslog_listen": syslog_listen, "audit": False if no_audit else None}
    chosen = WatchPolicy.of(doc, overrides, OPTION_OF)
    tmap = target_map(targets_file, quiet)
    selection = select_targets(outdir, doc, (), action="push" if chosen.policy == "auto" else "audit",
                               target_map=tmap)
    check_loopback(selection.targets)
    host_keys = host_key_policy(insecure, known_hosts)
    return _run(outdir, doc, state, chosen, selection.targets, host_keys, known_hosts, insecure, targets_file,
                workers, events_file, once, as_json, quiet)


def _run(outdir: Path, doc: PlanDocument, state: FabricState, chosen: WatchPolicy, targets: list[Target],
         host_keys: HostKeyPolicy, known_hosts: Path | None, insecure: bool, targets_file: Path | None, workers: int,
         events_file: Path | None, once: bool, as_json: bool, quiet: bool) -> int:
    from vlanroute.operate.events import EventLog
    from vlanroute.operate.watcher import Connection, Watcher
    creds = load_credentials()
    conn = Connection(creds, known_hosts, insecure, host_keys.ssh_config_file, host_keys.allow_agent, targets_file,
                      workers)
    log = EventLog(doc.name or outdir.name, path=events_file, quiet=quiet)
    plan_sha = sha256_text(read_text_file(outdir / PLAN_FILE, what="plan"))
    watcher = Watcher(outdir, doc, plan_sha, state, chosen, conn, targets, log)
    stop = threading.Event()
    interrupted = threading.Event()

    def on_term(signum: int, frame: object) -> None:
        stop.set()

    def on_int(signum: int, frame: object) -> None:
        interrupted.set()
        stop.set()
    previous = {sig: signal.signal(sig, handler) for sig, handler in ((signal.SIGTERM, on_term),
                                                                        (signal.SIGINT, on_int))}
    try:
        code = watcher.run(stop, once=once)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        log.close()
    code = ExitCode.INTERRUPTED if interrupted.is_set() else code if once or watcher.plan_changed else ExitCode.OK
    if as_json:
        from vlanroute.schemas.outputs import WatchDocument
        emit_document(WatchDocument.model_validate({**watcher.summary(), "exit_code": int(code)}))
    return code


def _unit(outdir: Path, state: FabricState, plan: str, env_file: Path | None, user: str | None,
          events: Path | None, print_unit: bool, unit_dir: Path | None, force: bool) -> int:
    from vlanroute.operate.unit import unit_name, unit_text
    env = env_file or Path("/etc/vlanroute") / f"{plan}.env"
    text = unit_text(plan=plan, outdir=outdir, state_dir=Path(state.path).resolve(), env_file=env.absolute(),
                     user=user, events=events.absolute() if events else None)
    if print_unit:
        click.echo(text, nl=False)
        return ExitCode.OK
    assert unit_dir is not None
    path = unit_dir / unit_name(plan)
    if path.exists() and not force and path.read_text(errors="replace") != text:
        raise UserError("a different unit file is there already", file=str(path), field="--install-unit",
                        fix="add --force to replace it, or remove it first")
    from vlanroute.safeio.output import write_output
    write_output(path, text, field="--install-unit")
    click.echo(f"wrote {path}", err=True)
    click.echo(f"next: put the SSH credentials in {env} (mode 0600: VLANROUTE_SSH_USER=..., "
               "VLANROUTE_SSH_PASSWORD=... or VLANROUTE_SSH_KEY=..., VLANROUTE_KNOWN_HOSTS=...), then\n"
               f"  systemctl daemon-reload && systemctl enable --now {unit_name(plan)}\n"
               f"  journalctl -u {unit_name(plan)} -f      # the watcher's JSON lines", err=True)
    return ExitCode.OK
