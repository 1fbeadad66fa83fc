"""`vlanroute push`: apply OUTDIR/switches/*.cfg to the live switches, safely.

Per switch: log in, fetch the running config and save it in the state directory
(vlanroute.device.statedir, never inside OUTDIR), check that
the switch is what the plan expects (pre-flight: model, firmware, ports), compute what the
push will change on the parsed models and show it, refuse a switch whose running config
touches what the plan manages (vlanroute.device.conflicts), ask the switch about the
unconfirmed commands it would be sent (context help), then (unless --dry-run) send the
commands one by one in the loop-safe order (vlanroute.device.order), check that the running
config is what was predicted and that every inter-switch port it leaves with spanning tree
off forwards in the VLANs it carries (vlanroute.device.stpstate), and only then save it.
Lines of the running config vlanroute does not manage are never sent, changed or compared.
If the switch rejects a command, the session dies, the result differs from the prediction,
or such a port does not forward, the switch is rolled back to the backup (over a new
session if needed) and the startup config is left alone. Once the save's
confirming key is sent, nothing is rolled back: the running config is the verified one and
the startup config may already be written (SAVE-UNCERTAIN). A failure stops the run:
switches not yet started are skipped unless --keep-going; `stop()` (Ctrl-C) does the same.
With `save=False` the verified config is left unsaved for `vlanroute save`. Every state
change of a switch that may change it is written to the push journal first
(vlanroute.device.journal).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
import difflib
from pathlib import Path
import threading
import logging
import time

from vlanroute.model.bridge import LagPort, PortRef, SwitchConfig
from vlanroute.device.backups import prune_backups
from vlanroute.device.conflicts import find_conflicts
from vlanroute.device.credentials import Credentials
from vlanroute.device import journal as J
from vlanroute.device.journal import Journal, JournalWriteError, sha256_lines, sha256_text
from vlanroute.device.statedir import FabricState, now_stamp
from vlanroute.device import stpstate
from vlanroute.errors import UserError
from vlanroute.device.order import PortRoles, UnsafeOrder, check_order, insert_fixups
from vlanroute.device.preflight import PreflightMismatch, check_facts, gather_facts, run_probes
# The result values and types live in device/results.py (transaction.py names them too); the
# CLI, the API and Nornir import them from here.
from vlanroute.device.results import (APPLIED, APPLIED_UNSAVED, CHANGED, DRY_RUN,  # noqa: F401
                                      NEEDS_A_PERSON, NOT_STARTED, PARTLY_APPLIED, ROLLBACK_FAILED,
                                      ROLLED_BACK, SAVE_UNCERTAIN, SKIPPED, STEPPED, SUCCESS, UNCHANGED,
                                      Prepared, PushUI, SwitchResult)
from vlanroute.device.session import (CommandRejected, ConnectFailed, ConnectionLost, HostKeyPolicy,
                                      SaveFailed, SessionError, SwitchSession)
from vlanroute.device.targets import Target
from vlanroute.device.transaction import apply_in_transaction, planned_commands

_log = logging.getLogger(__name__)

RECONNECT_ATTEMPTS = 3
RECONNECT_PAUSE_S = 1.0


@dataclass(frozen=True)
class PushOptions:
    dry_run: bool = False
    workers: int = 1
    keep_going: bool = False
    host_keys: HostKeyPolicy = HostKeyPolicy()
    strict: bool = False             # refuse any running-config line the parser does not know
    save: bool = True                # False: push --no-save, `vlanroute save` commits later
    # push --resume: switches the interrupted push applied and verified but did not finish
    # saving; found already as rendered, they are saved (not left with the old startup config).
    resave: frozenset[str] = frozenset()


class PushRefused(Exception):
    """The running config touches what the plan manages (vlanroute.device.conflicts)."""


def parse_target_config(target: Target, text: str, source: str, strict: bool = True) -> SwitchConfig:
    """`strict`: the family's parser for rendered configs, which refuses any line it does not
    know; else the running-config reader, which keeps such lines as context."""
    parse = target.family.parse if strict else target.family.parse_running
    try:
        return parse(text, switch=target.name, platform=target.platform, source=source)
    except UserError as exc:
        if strict:
            # The user chose --strict; the way out they most likely want is to drop it.
            way_out = "push without --strict, which keeps lines outside vlanroute's scope as they are"
            exc.fix = f"{exc.fix}; or {way_out}" if exc.fix else way_out
        raise


def canonical_of(target: Target, cfg: SwitchConfig) -> list[str]:
    return [line.text for line in target.family.canonical_lines(cfg)]


def prepare(target: Target, running_text: str, strict: bool = False,
            rendered_text: str | None = None) -> Prepared:
    """Commands to send and the config they will leave, computed on parsed models.

    The prediction parses the running config followed by the commands, which is what the
    switch does with them. Removals that the rendered file cannot know about (old VLANs on
    managed ports) are added from the difference to the rendered model. PushRefused if the
    running config touches what the plan manages. `rendered_text`: the switch's config as
    read once for the whole push (bundle snapshot); else read from OUTDIR now."""
    family = target.family
    if rendered_text is None:
        rendered_text = target.config_path.read_text()
    roles = PortRoles.from_plan(target.switch)
    rendered = parse_target_config(target, rendered_text, str(target.config_path))
    running = parse_target_config(target, running_text, f"{target.name} running-config", strict)
    conflicts = find_conflicts(target, running)
    if conflicts:
        more = f" (and {len(conflicts) - 3} more)" if len(conflicts) > 3 else ""
        raise PushRefused("the running config touches what the plan manages: "
                          + "; ".join(map(str, conflicts[:3])) + more)
    base = family.config_commands(rendered_text)
    check_order(base, roles, family)
    first = parse_target_config(target, running_text + "\n" + "\n".join(base), f"{target.name} prediction", strict)
    lag_members: set[PortRef] = {p for p, d in target.switch.ports.items() if d.role == "lag-member"}
    host_fix = family.port_fixups(first, rendered, set(roles.host))
    inter_fix = family.port_fixups(first, rendered, set(roles.inter_switch) - lag_members)
    commands = insert_fixups(base, roles, family, host_fix, inter_fix)
    predicted = parse_target_config(target, running_text + "\n" + "\n".join(commands),
                       f"{target.name} prediction", strict)
    wanted = rendered.vlans
    if _plan_view(target, rendered, roles, wanted) != _plan_view(target, predicted, roles, wanted):
        raise UnsafeOrder("the commands would not reach the rendered config on the managed "
                          "ports (a bug): refusing to push")
    before, after = canonical_of(target, running), canonical_of(target, predicted)
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


@dataclass(frozen=True)
class Events:
    """The journal events one kind of change writes (push, or a rollback's restore)."""

    applying: str
    applied: str
    saving: str
    saved: str
    save_uncertain: str
    rolled_back: str
    rollback_failed: str
    stepped: str = J.STEPPED
    # Must a record be on disk before its step? A push's: yes (a switch it cannot announce
    # is not changed). A rollback's: no, it restores whatever the disk holds (a full or
    # read-only state directory must never stop it: the records missed are named on stderr).
    required: bool = True


PUSH_EVENTS = Events(J.APPLYING, J.APPLIED, J.SAVING, J.SAVED, J.SAVE_UNCERTAIN, J.ROLLED_BACK, J.ROLLBACK_FAILED)
RESTORE_EVENTS = Events(J.RESTORING, J.RESTORED, J.SAVING, J.RESTORED, J.SAVE_UNCERTAIN, J.RESTORE_FAILED,
                        J.RESTORE_FAILED, required=False)


@dataclass(frozen=True)
class StepContext:
    """Where one switch's change stands in a transition (vlanroute.device.change)."""

    index: int = 0                  # the step's number (1-based); 0: not a transition step
    kind: str = "change"            # change | remove | add (vlanroute.transition.planner)
    final: bool = True              # the switch's last step: saved after it
    events: Events = PUSH_EVENTS
    start: str = "the backup"       # where a failed step is put back, in messages
    save: bool = True               # False: never saved (a rollback of a switch never saved)

    def fields(self) -> dict[str, object]:
        return {"step": self.index, "kind": self.kind} if self.index else {}


@dataclass
class StepJob:
    """One planned step on one switch: its commands and the configs it goes from and to."""

    index: int
    kind: str
    target: Target
    prep: Prepared                  # running: the config the step starts from; predicted: where it ends
    backup: Path | None             # the switch's backup before the change (the fabric's before-state)
    final: bool
    events: Events = PUSH_EVENTS
    save: bool = True

    def context(self) -> StepContext:
        start = "the backup" if self.kind != "add" else f"where step {self.index} began (its removals stay applied)"
        return StepContext(self.index, self.kind, self.final, self.events, start, self.save)


STOPPED_BY_FAILURE = ("not started: an earlier switch failed (use --keep-going to continue "
                      "past failures)")
STOPPED_BY_USER = "not started: interrupted (Ctrl-C)"


class Pusher:
    """Runs the push over a set of targets; one instance per pass (preview, then apply)."""

    def __init__(self, outdir: Path, state: FabricState, creds: Credentials, options: PushOptions,
                 ui: PushUI, connect: Callable[..., SwitchSession] = SwitchSession,
                 journal: Journal | None = None, configs: Mapping[str, str] | None = None) -> None:
        self.outdir, self.state, self.creds, self.options, self.ui = outdir, state, creds, options, ui
        self.journal = journal
        # switch -> its rendered config as read once (vlanroute.device.snapshot): what the
        # person confirmed is what is sent, whatever happens to OUTDIR meanwhile.
        self.configs = configs
        self.journal_problems: list[str] = []     # records that could not be written
        # A push stops starting switches once its journal cannot be written; a rollback goes
        # on (rollback.make_pusher: it restores whatever the disk holds).
        self.journal_required = True
        self._connect = connect
        self._stop = threading.Event()
        self._why = STOPPED_BY_FAILURE
        self.interrupted = False

    def stop(self, interrupted: bool = True) -> None:
        """No switch starts from now on; those in progress finish or roll back."""
        if interrupted:
            self.interrupted, self._why = True, STOPPED_BY_USER
        self._stop.set()

    def go_on(self) -> None:
        """--keep-going after a failure: steps planned again may start (not after Ctrl-C)."""
        if not self.interrupted:
            self._stop.clear()

    def run(self, targets: list[Target],
            previous: dict[str, SwitchResult] | None = None) -> list[SwitchResult]:
        """Push to every target. `previous`: each switch's result of the preview pass; a
        switch whose running config changed since then is not touched, and its backup of
        then is kept if the text is the same."""
        workers = max(1, min(self.options.workers, len(targets) or 1))
        for t in targets:
            self.ui.begin(t.name)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(self._one, t, (previous or {}).get(t.name)) for t in targets]
            results = [f.result() for f in futures]
        return results

    def _one(self, target: Target, previous: SwitchResult | None) -> SwitchResult:
        if self._stop.is_set():
            res = SwitchResult(target.name, SKIPPED, message=self._why)
        else:
            start = time.monotonic()
            try:
                res = self._push(target, previous)
            except Exception as exc:  # noqa: BLE001 - report it in the table, not as a traceback
                _log.exception("%s: unexpected error", target.name)
                res = SwitchResult(target.name, NOT_STARTED,
                                   message=f"not changed: {type(exc).__name__}: {exc}")
            res.seconds = time.monotonic() - start
            _log.info("%s: %s in %.1f s%s", res.switch, res.result, res.seconds,
                      f": {res.message}" if res.message else "")
            if res.result not in SUCCESS and not self.options.keep_going:
                self._stop.set()
        if self.journal is not None and res.result in (SKIPPED, NOT_STARTED, UNCHANGED):
            self._log(res.result, res.switch, message=res.message)
        self.ui.done(res)
        return res

    def _session(self, target: Target) -> SwitchSession:
        # One SSH session log per switch and connection under the state directory
        # (sessions/<switch>-<UTC time>.log, 0600): what a failed push saw, for the operator.
        log = self.state.path / "sessions" / f"{target.name}-{now_stamp()}.log"
        return self._connect(target.cli, target.host, target.port, self.creds,
                             replace(self.options.host_keys, session_log=log))

    def _backup(self, name: str, running_text: str, previous: SwitchResult | None) -> Path:
        if previous is not None and previous.backup is not None:
            try:
                if previous.backup.read_text() == running_text:
                    return previous.backup
            except OSError:
                pass
        path = self.state.write_backup(name, running_text)
        try:
            prune_backups(self.state, name)         # the stated rule: device/backups.py
        except OSError:
            pass                                    # old files left: never a reason to stop a push
        return path

    def _push(self, target: Target, previous: SwitchResult | None) -> SwitchResult:
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
            res.backup = self._backup(name, running_text, previous)
            try:
                self.ui.status(name, "pre-flight")
                check_facts(target, gather_facts(target, session, running_text))
                prep = prepare(target, running_text, self.options.strict,
                               None if self.configs is None else self.configs[name])
            except (UserError, UnsafeOrder, PushRefused, PreflightMismatch) as exc:
                text = exc.render() if isinstance(exc, UserError) else str(exc)
                what = "pre-flight: " if isinstance(exc, PreflightMismatch) else ""
                where = f" (line numbers of {res.backup.name})" if isinstance(exc, PushRefused) else ""
                res.message = f"not changed: {what}{text}{where}"
                return res
            # Every line the apply sends, wrappers and save included (transaction.planned_commands).
            res.diff, res.commands = prep.diff, planned_commands(target.family, prep.commands,
                                                                 save=self.options.save,
                                                                 stp=stpstate.read_commands(target, prep.predicted))
            res.prep, res.final_text = prep, running_text
            res.running_canonical = canonical_of(target, prep.running)
            if previous is not None and res.running_canonical != previous.running_canonical:
                res.message = ("not changed: the running config changed since the diff was "
                               "shown; run push again")
                return res
            if not prep.diff:           # also in a dry run: nothing would be sent
                res.result, res.message, res.commands = UNCHANGED, "already as rendered; nothing sent", []
                if name in self.options.resave and self.options.save and not self.options.dry_run:
                    return self._save_as_rendered(session, res)
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

    def _log(self, event: str, switch: str, **fields: object) -> None:
        """Record what already happened. A record that cannot be written does not undo it:
        it is kept for the message and the run stops starting new switches."""
        if self.journal is None:
            return
        try:
            self.journal.append(event, switch, **fields)
        except JournalWriteError as exc:
            self.journal_problems.append(f"{switch}: {event} not recorded: {exc.message}")
            if self.journal_required:
                self._stop.set()

    def _log_ahead(self, event: str, switch: str, required: bool = True, **fields: object) -> None:
        """Record what is about to happen; JournalWriteError: it must not happen (unless the
        record is not `required`: then it is named, as a record of the past is)."""
        if self.journal is not None:
            try:
                self.journal.append(event, switch, **fields)
            except JournalWriteError as exc:
                if not required:
                    self.journal_problems.append(f"{switch}: {event} not recorded: {exc.message}")
                    return
                self._stop.set()        # the next switch could not be recorded either
                raise

    def save_as_is(self, target: Target, want: SwitchConfig, backup: Path | None,
                   events: Events = PUSH_EVENTS) -> SwitchResult:
        """Save a switch whose running config is already `want` (a rollback that had nothing
        to send to a switch whose startup config may hold a newer one)."""
        res = SwitchResult(target.name, NOT_STARTED, backup=backup)
        opened = self._open_at(target, want, res, "not saved", "the running config changed meanwhile")
        if opened is None:
            return res
        session, text, _ = opened
        try:
            res.final_text = text
            return self._save_as_rendered(session, res, events)
        finally:
            session.close()

    def _open_at(self, target: Target, want: SwitchConfig, res: SwitchResult, verdict: str,
                 moved: str) -> tuple[SwitchSession, str, SwitchConfig] | None:
        """A session to a switch whose running config is still `want` (canonically), its text
        and parse; else None, `res.message` saying why ("<verdict>: ...")."""
        name = target.name
        try:
            session = self._session(target)
        except ConnectFailed as exc:
            res.message = f"{verdict}: {exc}"
            return None
        try:
            text = session.running_config()
            now = parse_target_config(target, text, f"{name} running-config", self.options.strict)
            if canonical_of(target, now) != canonical_of(target, want):
                res.message = f"{verdict}: {moved}"
                session.close()
                return None
            return session, text, now
        except (SessionError, UserError) as exc:
            res.message = f"{verdict}: {exc.render() if isinstance(exc, UserError) else exc}"
            session.close()
            return None

    def _save_as_rendered(self, session: SwitchSession, res: SwitchResult,
                          events: Events = PUSH_EVENTS) -> SwitchResult:
        """push --resume: the running config is as rendered (checked just now, as after an
        apply), the interrupted push's save did not end: save it."""
        try:
            self._log_ahead(events.saving, res.switch, events.required)
            res = save_switch(session, res, self._log, events)
        except JournalWriteError as exc:
            res.result, res.message = NOT_STARTED, f"not saved: {exc.message}"
            return res
        except SaveFailed as exc:
            res.result, res.message = NOT_STARTED, f"not saved: the save was refused before it began ({exc})"
            return res
        if res.result == APPLIED:
            res.message = "applied by the interrupted push; saved now"
        return res

    def _apply(self, target: Target, session: SwitchSession, prep: Prepared,
               res: SwitchResult, ctx: StepContext = StepContext()) -> SwitchResult:
        """Send `prep.commands`, check the result against the prediction, then save it (on
        the switch's last step of a transition, unless --no-save); on failure put the switch
        back where the step began (`prep.running`)."""
        name = target.name
        ev = ctx.events
        save = self.options.save and ctx.final and ctx.save
        ahead = {"backup": str(res.backup), "backup_sha256": sha256_text(prep.running_text),
                 "commands": len(prep.commands), **ctx.fields()}
        if target.family.transaction is not None:
            def canonical(text: str) -> list[str]:
                return canonical_of(target, parse_target_config(target, text, f"{name} running-config", self.options.strict))
            try:
                self._log_ahead(ev.applying, name, ev.required, **ahead)
            except JournalWriteError as exc:
                return _unrecorded(res, exc)
            res = apply_in_transaction(target, session, prep, res, self.ui, canonical,
                                       lambda: self._session(target), save=save,
                                       before_save=lambda: self._log_ahead(ev.saving, name, ev.required))
            if res.result == APPLIED_UNSAVED:
                # A commit writes the running config only (EOS, OS10 alike): as on the other
                # families, `vlanroute save` checks this sha256 and then saves.
                event = ev.applied if ctx.final else ev.stepped
                self._log(event, name, saved=False, commands_sent=res.commands_sent,
                          running_sha256=sha256_lines(canonical_of(target, prep.predicted)))
                res.final_text = None
                if not ctx.final:
                    res.result, res.message = STEPPED, f"step {ctx.index} applied and verified"
                return res
            if res.result in (ROLLED_BACK, ROLLBACK_FAILED) and ctx.index:
                res.message = res.message.replace("rolled back to the backup", f"rolled back to {ctx.start}")
            event = {APPLIED: ev.saved, SAVE_UNCERTAIN: ev.save_uncertain, ROLLED_BACK: ev.rolled_back,
                     ROLLBACK_FAILED: ev.rollback_failed}.get(res.result, J.NOT_STARTED)
            self._log(event, name, message=res.message, **({"saved": True} if res.result == APPLIED else {}))
            return res
        self.ui.total(name, len(prep.commands))
        self.ui.status(name, "applying")
        assert res.backup is not None
        # Journal first: after a crash from here on, this switch may have changed.
        try:
            self._log_ahead(ev.applying, name, ev.required, **ahead)
        except JournalWriteError as exc:
            return _unrecorded(res, exc)
        problem = ""
        sent = 0
        try:
            for command in prep.commands:
                session.run(command)
                sent += 1
                self.ui.advance(name)
            self.ui.status(name, "checking")
            text = session.running_config()
            after = parse_target_config(target, text, f"{name} running-config", self.options.strict)
            if canonical_of(target, after) != canonical_of(target, prep.predicted):
                extra = [d for d in difflib.unified_diff(canonical_of(target, prep.predicted),
                                                         canonical_of(target, after), lineterm="", n=0)
                         if d[:1] in "+-" and d[:3] not in ("+++", "---")]
                problem = ("running config after the push differs from the prediction: "
                           + "; ".join(extra[:3]))
            elif blocked := stpstate.blocked(stp := stpstate.check(target, session.run, prep.predicted)):
                problem = stpstate.problem(blocked)       # issue 41 item 10: a tree would be cut
            else:
                down = stpstate.down_note(stp)            # a cable out: noted, the step stands
                # Ahead of what comes next: `save` and `--resume` trust an `applied` record.
                res.commands_sent, res.final_text = sent, text
                self._log_ahead(ev.applied if ctx.final else ev.stepped, name, ev.required, saved=False,
                                commands_sent=sent, running_sha256=sha256_lines(canonical_of(target, after)))
                if not ctx.final:
                    res.result, res.message = STEPPED, f"step {ctx.index} applied and verified" + down
                    return res
                if not save:
                    res.result = APPLIED_UNSAVED
                    res.message = "applied, NOT saved: `vlanroute save OUTDIR` commits it" + down
                    return res
                self._log_ahead(ev.saving, name, ev.required)
                saved = save_switch(session, res, self._log, ev)
                saved.message += down if saved.result == APPLIED else ""
                return saved
        except JournalWriteError as exc:
            problem = f"not saved: {exc.message} (the running config is rolled back)"
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
        return self._rollback(target, session, prep, res, problem, ctx)

    def _rollback(self, target: Target, session: SwitchSession | None, prep: Prepared,
                  res: SwitchResult, problem: str, ctx: StepContext = StepContext()) -> SwitchResult:
        name = target.name
        ev = ctx.events
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
                self._log(ev.rollback_failed, name, message=res.message)
                return res
            try:
                res.commands_sent += restore_running(target, session, prep.running,
                                                     self.options.strict)
            except (SessionError, UserError, RestoreMismatch) as exc:
                text = exc.render() if isinstance(exc, UserError) else str(exc)
                res.result = ROLLBACK_FAILED
                res.message = (f"{problem}; rollback failed ({text}): the switch may be "
                               f"HALF-APPLIED, restore it from {res.backup}")
                self._log(ev.rollback_failed, name, message=res.message)
                return res
            res.result, res.final_text = ROLLED_BACK, prep.running_text
            res.message = f"{problem}; rolled back to {ctx.start} (startup config untouched)"
            self._log(ev.rolled_back, name, message=problem)
            return res
        finally:
            if owned is not None:
                owned.close()

    # -- transitions: the steps planned by vlanroute.transition, wave by wave ------------------
    def observe(self, target: Target) -> SwitchResult:
        """Read a switch that takes no step (read-only): its running config, backed up."""
        res = SwitchResult(target.name, UNCHANGED, message="read only: not changed by this run")
        try:
            session = self._session(target)
        except ConnectFailed as exc:
            res.result, res.message = NOT_STARTED, f"could not be read: {exc}"
            return res
        try:
            text = session.running_config()
            res.final_text = text
        except (SessionError, UserError) as exc:
            why = exc.render() if isinstance(exc, UserError) else str(exc)
            res.result, res.message = NOT_STARTED, f"could not be read: {why}"
            return res
        finally:
            session.close()
        try:
            res.backup = self._backup(target.name, text, None)
        except (OSError, UserError) as exc:
            # Read, but not kept on disk (the state directory full or read-only): the change
            # goes on from what was read; the fabric's history will lack this file.
            why = exc.render() if isinstance(exc, UserError) else str(exc)
            self.journal_problems.append(f"{target.name}: backup not written: {why}")
        return res

    def run_steps(self, jobs: list[StepJob], waves: list[int],
                  on_wave: Callable[[list[StepJob]], None] = lambda jobs: None) -> list[SwitchResult]:
        """Run the steps in order, each wave's at once (at most `workers`); a failure stops
        every later step (unless --keep-going: the caller then plans again). One result per job."""
        results: list[SwitchResult] = []
        for wave in sorted(set(waves)):
            group = [j for j, w in zip(jobs, waves) if w == wave]
            on_wave(group)
            workers = max(1, min(self.options.workers, len(group)))
            with ThreadPoolExecutor(max_workers=workers) as pool:
                futures = [pool.submit(self._step_or_skip, job) for job in group]
                results += [f.result() for f in futures]
        return results

    def _step_or_skip(self, job: StepJob) -> SwitchResult:
        if self._stop.is_set():
            res = SwitchResult(job.target.name, SKIPPED, message=self._why, backup=job.backup)
            self._log(SKIPPED, res.switch, message=res.message, step=job.index)
            self.ui.done(res)
            return res
        start = time.monotonic()
        try:
            res = self._step(job)
        except Exception as exc:  # noqa: BLE001 - report it in the table, not as a traceback
            _log.exception("%s: unexpected error", job.target.name)
            res = SwitchResult(job.target.name, NOT_STARTED, message=f"not changed: {type(exc).__name__}: {exc}")
        res.seconds = time.monotonic() - start
        _log.info("%s: step %d: %s in %.1f s%s", res.switch, job.index, res.result, res.seconds,
                  f": {res.message}" if res.message else "")
        if res.result not in (*SUCCESS, STEPPED) and not self.options.keep_going:
            self._stop.set()
        if res.result in (NOT_STARTED, UNCHANGED):
            self._log(res.result, res.switch, message=res.message, step=job.index)
        self.ui.done(res)
        return res

    def _step(self, job: StepJob) -> SwitchResult:
        target, name = job.target, job.target.name
        res = SwitchResult(name, NOT_STARTED, backup=job.backup)
        self.ui.status(name, f"connecting (step {job.index})")
        opened = self._open_at(target, job.prep.running, res, "not changed",
                               f"the running config changed since step {job.index} was planned (by hand, or "
                               "another tool); run push again: it plans from what the switches run")
        if opened is None:
            return res
        session, text, now = opened
        try:
            prep = replace(job.prep, running_text=text, running=now)
            return self._apply(target, session, prep, res, job.context())
        finally:
            session.close()


def _unrecorded(res: SwitchResult, exc: JournalWriteError) -> SwitchResult:
    """The journal could not announce the first command: the switch is left as it was."""
    res.result = NOT_STARTED
    res.message = f"not changed: {exc.message}" + (f"; fix: {exc.fix}" if exc.fix else "")
    return res


class RestoreMismatch(Exception):
    """After the undo commands the running config still differs from the backup."""


def restore_running(target: Target, session: SwitchSession, want: SwitchConfig,
                    strict: bool = False) -> int:
    """Send the family's delta from the switch's current parsed config to `want` (the
    backup's; spanning tree back on before any membership changes) and check the result.
    Returns the number of commands sent; RestoreMismatch if the result differs."""
    name = target.name
    current = parse_target_config(target, session.running_config(), f"{name} running-config", strict)
    if canonical_of(target, current) == canonical_of(target, want):
        return 0            # already restored (a switch the push rolled back itself)
    sent = 0
    for command in target.family.delta_commands(current, want):
        session.run(command)
        sent += 1
    back = parse_target_config(target, session.running_config(), f"{name} running-config", strict)
    if canonical_of(target, back) != canonical_of(target, want):
        diff = [d for d in difflib.unified_diff(canonical_of(target, want), canonical_of(target, back),
                                                lineterm="", n=0)
                if d[:1] in "+-" and d[:3] not in ("+++", "---")]
        raise RestoreMismatch("the running config still differs from the backup: "
                              + "; ".join(diff[:3]))
    return sent


def save_switch(session: SwitchSession, res: SwitchResult,
                log: Callable[..., None], events: Events | None = None) -> SwitchResult:
    """Save the verified running config; a save whose key was sent but did not confirm is
    SAVE-UNCERTAIN, never rolled back. SaveFailed (not begun) propagates."""
    name = res.switch
    try:
        session.save()
    except SaveFailed as exc:
        if not exc.startup_may_have_changed:
            raise
        # The running config is the verified one; rolling it back now could
        # leave it older than a startup config that was in fact written.
        res.result = SAVE_UNCERTAIN
        res.message = (f"applied and verified, but the save did not confirm ({exc}): "
                       "the startup config may have changed. The running config is "
                       "left as pushed; check `show startup-config` and save by hand "
                       f"(copy running-config startup-config), or restore {res.backup}")
        log((events or PUSH_EVENTS).save_uncertain, name, message=str(exc))
        return res
    res.result = APPLIED
    res.message = "applied and saved"
    log((events or PUSH_EVENTS).saved, name, saved=True, commands_sent=res.commands_sent)
    return res
