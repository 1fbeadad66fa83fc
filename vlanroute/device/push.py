"""`vlanroute push`: apply OUTDIR/switches/*.cfg to the live switches, safely.

Per switch: log in, fetch the running config and save it under OUTDIR/backups/, check that
the switch is what the plan expects (pre-flight: model, firmware, ports), compute what the
push will change on the parsed models and show it, refuse a switch whose running config
touches what the plan manages (vlanroute.device.conflicts), ask the switch about the
unconfirmed commands it would be sent (context help), then (unless --dry-run) send the
commands one by one in the loop-safe order (vlanroute.device.order), check that the running
config is what was predicted, and only then save it. Lines of the running config vlanroute
does not manage are never sent, changed or compared. If the switch rejects a command, the
session dies, or the result differs from the prediction, the switch is rolled back to the
backup (over a new session if needed) and the startup config is left alone. Once the save's
confirming key is sent, nothing is rolled back: the running config is the verified one and
the startup config may already be written (SAVE-UNCERTAIN). A failure stops the run:
switches not yet started are skipped unless --keep-going.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
import difflib
import os
from pathlib import Path
import threading
import time

from vlanroute.model.bridge import LagPort, PortRef, SwitchConfig
from vlanroute.device.conflicts import find_conflicts
from vlanroute.device.credentials import Credentials
from vlanroute.errors import UserError
from vlanroute.device.order import PortRoles, UnsafeOrder, check_order, insert_fixups
from vlanroute.device.preflight import PreflightMismatch, check_facts, gather_facts, run_probes
from vlanroute.device.session import (CommandRejected, ConnectFailed, ConnectionLost, HostKeyPolicy,
                                      SaveFailed, SessionError, SwitchSession)
from vlanroute.device.targets import Target
from vlanroute.device.transaction import apply_in_transaction

RECONNECT_ATTEMPTS = 3
RECONNECT_PAUSE_S = 1.0

# Result values. Only the first three mean success; the last two need a person.
APPLIED, UNCHANGED, DRY_RUN = "applied", "unchanged", "dry-run"
NOT_STARTED, SKIPPED, ROLLED_BACK, ROLLBACK_FAILED, SAVE_UNCERTAIN = (
    "not-started", "skipped", "rolled-back", "ROLLBACK-FAILED", "SAVE-UNCERTAIN")
SUCCESS = (APPLIED, UNCHANGED, DRY_RUN)
NEEDS_A_PERSON = (ROLLBACK_FAILED, SAVE_UNCERTAIN)


@dataclass
class SwitchResult:
    switch: str
    result: str
    commands_sent: int = 0
    seconds: float = 0.0
    backup: Path | None = None
    message: str = ""
    diff: list[str] = field(default_factory=list)
    running_canonical: list[str] = field(default_factory=list)
    switch_diff: list[str] = field(default_factory=list)   # the switch's own diff (transaction)


class PushUI:
    """What the push reports while it runs; the CLI shows it with rich, tests may record it."""

    def begin(self, switch: str) -> None: ...
    def total(self, switch: str, commands: int) -> None: ...
    def status(self, switch: str, text: str) -> None: ...
    def advance(self, switch: str) -> None: ...
    def done(self, result: SwitchResult) -> None: ...


@dataclass(frozen=True)
class PushOptions:
    dry_run: bool = False
    workers: int = 1
    keep_going: bool = False
    host_keys: HostKeyPolicy = HostKeyPolicy()
    strict: bool = False             # refuse any running-config line the parser does not know


class PushRefused(Exception):
    """The running config touches what the plan manages (vlanroute.device.conflicts)."""


def _now_stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")


def write_backup(outdir: Path, switch: str, text: str) -> Path:
    """OUTDIR/backups/<switch>-<UTC time>.cfg, readable by the owner only (running configs
    hold password hashes and SNMP communities). `switch` is a name from the validated plan
    document (no '/', no leading dot), so the file stays in OUTDIR/backups."""
    folder = outdir / "backups"
    folder.mkdir(exist_ok=True)
    path = folder / f"{switch}-{_now_stamp()}.cfg"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    return path


@dataclass
class Prepared:
    running_text: str
    running: SwitchConfig
    predicted: SwitchConfig
    commands: list[str]
    diff: list[str]


def _parse(target: Target, text: str, source: str, strict: bool = True) -> SwitchConfig:
    """`strict`: the family's parser for rendered configs, which refuses any line it does not
    know; else the running-config reader, which keeps such lines as context."""
    parse = target.family.parse if strict else target.family.parse_running
    return parse(text, switch=target.name, platform=target.platform, source=source)


def _canonical(target: Target, cfg: SwitchConfig) -> list[str]:
    return [line.text for line in target.family.canonical_lines(cfg)]


def prepare(target: Target, running_text: str, strict: bool = False) -> Prepared:
    """Commands to send and the config they will leave, computed on parsed models.

    The prediction parses the running config followed by the commands, which is what the
    switch does with them. Removals that the rendered file cannot know about (old VLANs on
    managed ports) are added from the difference to the rendered model. PushRefused if the
    running config touches what the plan manages."""
    family = target.family
    rendered_text = target.config_path.read_text()
    roles = PortRoles.from_plan(target.switch)
    rendered = _parse(target, rendered_text, str(target.config_path))
    running = _parse(target, running_text, f"{target.name} running-config", strict)
    conflicts = find_conflicts(target, running)
    if conflicts:
        more = f" (and {len(conflicts) - 3} more)" if len(conflicts) > 3 else ""
        raise PushRefused("the running config touches what the plan manages: "
                          + "; ".join(map(str, conflicts[:3])) + more)
    base = family.config_commands(rendered_text)
    check_order(base, roles, family)
    first = _parse(target, running_text + "\n" + "\n".join(base), f"{target.name} prediction", strict)
    lag_members: set[PortRef] = {p for p, d in target.switch.ports.items() if d.role == "lag-member"}
    host_fix = family.port_fixups(first, rendered, set(roles.host))
    inter_fix = family.port_fixups(first, rendered, set(roles.inter_switch) - lag_members)
    commands = insert_fixups(base, roles, family, host_fix, inter_fix)
    predicted = _parse(target, running_text + "\n" + "\n".join(commands),
                       f"{target.name} prediction", strict)
    wanted = rendered.vlans
    if _plan_view(target, rendered, roles, wanted) != _plan_view(target, predicted, roles, wanted):
        raise UnsafeOrder("the commands would not reach the rendered config on the managed "
                          "ports (a bug): refusing to push")
    before, after = _canonical(target, running), _canonical(target, predicted)
    diff = list(difflib.unified_diff(before, after, f"{target.name} running-config",
                                     f"{target.name} after push", lineterm="", n=0))
    return Prepared(running_text, running, predicted, commands, diff)


def _plan_view(target: Target, cfg: SwitchConfig, roles: PortRoles, vlans: set[int]) -> list[str]:
    """The part of a config the plan decides: its VLANs, the global settings it renders
    (aging time, flow control; not global spanning tree, which it leaves as it is) and the
    forwarding settings of managed ports (a LAG member counts only by its LAG membership)."""
    flow = None if target.family.flow_per_port else cfg.flow_control   # per port: in the lines below
    keep = [str(sorted(vlans & cfg.vlans)), str((cfg.aging_time, flow))]
    members: set[str] = set()
    for line in target.family.canonical_lines(cfg):
        port = line.port
        if port is None or port not in roles.managed:
            continue
        if not isinstance(port, LagPort) and cfg.ports[port].lag is not None:
            if port not in members:
                members.add(port)
                keep.append(f"{port}: member of LAG {cfg.ports[port].lag}")
        else:
            keep.append(line.text)
    return keep


class Pusher:
    """Runs the push over a set of targets; one instance per command invocation."""

    def __init__(self, outdir: Path, creds: Credentials, options: PushOptions, ui: PushUI,
                 connect: Callable[..., SwitchSession] = SwitchSession) -> None:
        self.outdir, self.creds, self.options, self.ui = outdir, creds, options, ui
        self._connect = connect
        self._stop = threading.Event()

    def run(self, targets: list[Target],
            expected: dict[str, list[str]] | None = None) -> list[SwitchResult]:
        """Push to every target. `expected`: the canonical running config each switch had
        when its diff was shown; a switch that changed since then is not touched."""
        workers = max(1, min(self.options.workers, len(targets) or 1))
        for t in targets:
            self.ui.begin(t.name)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(self._one, t, (expected or {}).get(t.name)) for t in targets]
            results = [f.result() for f in futures]
        return results

    def _one(self, target: Target, expected: list[str] | None) -> SwitchResult:
        if self._stop.is_set():
            res = SwitchResult(target.name, SKIPPED, message="not started: an earlier switch "
                               "failed (use --keep-going to continue past failures)")
        else:
            start = time.monotonic()
            try:
                res = self._push(target, expected)
            except Exception as exc:  # noqa: BLE001 - report it in the table, not as a traceback
                res = SwitchResult(target.name, NOT_STARTED,
                                   message=f"not changed: {type(exc).__name__}: {exc}")
            res.seconds = time.monotonic() - start
            if res.result not in SUCCESS and not self.options.keep_going:
                self._stop.set()
        self.ui.done(res)
        return res

    def _session(self, target: Target) -> SwitchSession:
        return self._connect(target.cli, target.host, target.port, self.creds,
                             self.options.host_keys)

    def _push(self, target: Target, expected: list[str] | None) -> SwitchResult:
        name = target.name
        self.ui.status(name, "connecting")
        try:
            session = self._session(target)
        except ConnectFailed as exc:
            return SwitchResult(name, NOT_STARTED, message=f"not changed: {exc}")
        res = SwitchResult(name, NOT_STARTED)
        try:
            self.ui.status(name, "reading running-config")
            running_text = session.running_config()
            res.backup = write_backup(self.outdir, name, running_text)
            try:
                self.ui.status(name, "pre-flight")
                check_facts(target, gather_facts(target, session, running_text))
                prep = prepare(target, running_text, self.options.strict)
            except (UserError, UnsafeOrder, PushRefused, PreflightMismatch) as exc:
                text = exc.render() if isinstance(exc, UserError) else str(exc)
                what = "pre-flight: " if isinstance(exc, PreflightMismatch) else ""
                where = f" (line numbers of {res.backup.name})" if isinstance(exc, PushRefused) else ""
                res.message = f"not changed: {what}{text}{where}"
                return res
            res.diff = prep.diff
            res.running_canonical = _canonical(target, prep.running)
            if expected is not None and res.running_canonical != expected:
                res.message = ("not changed: the running config changed since the diff was "
                               "shown; run push again")
                return res
            if not prep.diff:           # also in a dry run: nothing would be sent
                res.result, res.message = UNCHANGED, "already as rendered; nothing sent"
                return res
            try:
                self.ui.status(name, "asking the switch (context help)")
                run_probes(target, session, prep.commands)
            except PreflightMismatch as exc:
                res.message = f"not changed: pre-flight: {exc}"
                return res
            except CommandRejected as exc:
                res.message = f"not changed: pre-flight: {exc}"
                return res
            if self.options.dry_run:
                res.result = DRY_RUN
                res.message = f"{len(prep.commands)} commands would be sent"
                return res
            return self._apply(target, session, prep, res)
        except ConnectionLost as exc:
            res.message = f"not changed: {exc}"
            return res
        finally:
            session.close()

    def _apply(self, target: Target, session: SwitchSession, prep: Prepared,
               res: SwitchResult) -> SwitchResult:
        name = target.name
        if target.family.transaction is not None:
            def canonical(text: str) -> list[str]:
                return _canonical(target, _parse(target, text, f"{name} running-config", self.options.strict))
            return apply_in_transaction(target, session, prep, res, self.ui, canonical,
                                        lambda: self._session(target))
        self.ui.total(name, len(prep.commands))
        self.ui.status(name, "applying")
        problem = ""
        sent = 0
        try:
            for command in prep.commands:
                session.run(command)
                sent += 1
                self.ui.advance(name)
            self.ui.status(name, "checking")
            after = _parse(target, session.running_config(), f"{name} running-config",
                           self.options.strict)
            if _canonical(target, after) != _canonical(target, prep.predicted):
                extra = [d for d in difflib.unified_diff(_canonical(target, prep.predicted),
                                                         _canonical(target, after), lineterm="", n=0)
                         if d[:1] in "+-" and d[:3] not in ("+++", "---")]
                problem = ("running config after the push differs from the prediction: "
                           + "; ".join(extra[:3]))
            else:
                self.ui.status(name, "saving")
                try:
                    session.save()
                except SaveFailed as exc:
                    if not exc.startup_may_have_changed:
                        raise
                    # The running config is the verified one; rolling it back now could
                    # leave it older than a startup config that was in fact written.
                    res.result, res.commands_sent = SAVE_UNCERTAIN, sent
                    res.message = (f"applied and verified, but the save did not confirm ({exc}): "
                                   "the startup config may have changed. The running config is "
                                   "left as pushed; check `show startup-config` and save by hand "
                                   f"(copy running-config startup-config), or restore {res.backup}")
                    return res
                res.result, res.commands_sent = APPLIED, sent
                res.message = "applied and saved"
                return res
        except SaveFailed as exc:
            problem = f"the save was refused before it began ({exc})"
        except CommandRejected as exc:
            problem = str(exc)
        except ConnectionLost as exc:
            problem = str(exc)
            session = None   # type: ignore[assignment]
        except UserError as exc:
            problem = f"cannot read the running config back: {exc.render()}"
        except Exception as exc:  # noqa: BLE001 - whatever broke, the switch must be rolled back
            problem = f"unexpected error after {sent} commands: {type(exc).__name__}: {exc}"
        res.commands_sent = sent
        return self._rollback(target, session, prep, res, problem)

    def _rollback(self, target: Target, session: SwitchSession | None, prep: Prepared,
                  res: SwitchResult, problem: str) -> SwitchResult:
        name = target.name
        self.ui.status(name, "rolling back")
        owned: SwitchSession | None = None
        last = ""
        try:
            for attempt in range(RECONNECT_ATTEMPTS):
                if session is not None:
                    break
                try:
                    session = owned = self._session(target)
                except ConnectFailed as exc:
                    last = str(exc)
                    time.sleep(RECONNECT_PAUSE_S * (attempt + 1))
            if session is None:
                res.result = ROLLBACK_FAILED
                res.message = (f"{problem}; could not reconnect to roll back ({last}): the "
                               f"switch may be HALF-APPLIED, restore it from {res.backup}")
                return res
            strict = self.options.strict
            try:
                current = _parse(target, session.running_config(), f"{name} running-config", strict)
                undo = target.family.delta_commands(current, prep.running)
                for command in undo:
                    session.run(command)
                    res.commands_sent += 1
                back = _parse(target, session.running_config(), f"{name} running-config", strict)
            except (SessionError, UserError) as exc:
                text = exc.render() if isinstance(exc, UserError) else str(exc)
                res.result = ROLLBACK_FAILED
                res.message = (f"{problem}; rollback failed ({text}): the switch may be "
                               f"HALF-APPLIED, restore it from {res.backup}")
                return res
            if _canonical(target, back) != _canonical(target, prep.running):
                res.result = ROLLBACK_FAILED
                res.message = (f"{problem}; after rollback the running config still differs "
                               f"from {res.backup}: restore it by hand")
                return res
            res.result = ROLLED_BACK
            res.message = f"{problem}; rolled back to the backup (startup config untouched)"
            return res
        finally:
            if owned is not None:
                owned.close()
