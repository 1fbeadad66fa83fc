"""`vlanroute rollback`: the fabric back to an earlier state, by the same loop-free machinery
as a push (device/change.py).

What to go back to: by default the state before the last push (every switch it touched, to
the backup taken before its first change: the journal names them); with `--to`, any state
the history recorded (device/history.py), every switch it read.

Every switch of the plan is read first (the ones to restore and the others, which stay as
they are); the transition from what they run now to the wanted configs is planned and
proven as a push's is, and run step by step. On each switch the family's delta is sent
(spanning tree back on before any VLAN membership changes, the memberships, then the rest)
and the result must equal the wanted config (the lines vlanroute does not manage were never
changed). A switch whose startup config may hold something newer (the push saved it, or
any push since the state named) is saved again, so a reboot keeps the restored config; one
never saved is left unsaved. One switch that cannot be restored never stops the others:
the steps left are planned again around it.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from vlanroute.bundle.document import PlanDocument
from vlanroute.device import journal as J
from vlanroute.device.change import Change, Refused, fabric_of, plan_transition, record, restore_change, run_transition
from vlanroute.device.credentials import Credentials
from vlanroute.device.fabric import (MAX_BACKUP_BYTES, RESTORE_FAILED, RESTORED, WOULD_RESTORE, FabricResult,
                                     _read_backup, rollback_order)
from vlanroute.device.history import StateRecord, list_states
from vlanroute.device.journal import Journal, JournalView, read_journal, sha256_text
from vlanroute.device.push import (APPLIED, APPLIED_UNSAVED, NOT_STARTED, RESTORE_EVENTS, PushOptions, PushUI, Pusher,
                                   SwitchResult, parse_target_config)
from vlanroute.device.session import HostKeyPolicy
from vlanroute.device.statedir import FabricState
from vlanroute.device.targets import Target
from vlanroute.errors import UserError
from vlanroute.model.bridge import SwitchConfig
from vlanroute.transition.fabric import SwitchView, view_of
from vlanroute.transition.planner import Transition


@dataclass
class Wanted:
    """Per switch the config to go back to (text, and where it came from), whether to save it
    afterwards, and the switches that cannot be restored with the reason."""

    texts: dict[str, tuple[str, Path]] = field(default_factory=dict)
    save: dict[str, bool] = field(default_factory=dict)
    failed: dict[str, FabricResult] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)     # the switches concerned, for the table


def wanted_from_journal(view: JournalView) -> Wanted:
    """The state before the last push: every switch it touched, its first backup."""
    out = Wanted()
    for history in rollback_order(view):
        out.order.append(history.switch)
        try:
            out.texts[history.switch] = (_read_backup(history), history.backup or Path("?"))
            out.save[history.switch] = history.ever_saved
        except UserError as exc:
            out.failed[history.switch] = FabricResult(history.switch, RESTORE_FAILED, backup=history.backup,
                                                      message=exc.render())
    return out


def wanted_from_state(state: FabricState, record: StateRecord) -> Wanted:
    """A recorded state: every switch it read. Saved afterwards when any push since the
    state may have written the switch's startup config."""
    out = Wanted()
    since = _saved_since(state, record)
    for name, rec in sorted(record.switches.items()):
        out.order.append(name)
        if rec.backup is None:
            out.failed[name] = FabricResult(name, RESTORE_FAILED, message=f"the state does not know it: {rec.unknown}")
            continue
        try:
            if rec.backup.stat().st_size > MAX_BACKUP_BYTES:
                raise UserError("the backup is too large to be a running config", file=str(rec.backup))
            text = rec.backup.read_bytes().decode("utf-8")
            if rec.sha256 and sha256_text(text) != rec.sha256:
                raise UserError("the backup changed since the state was recorded (sha256 differs)",
                                file=str(rec.backup), fix="restore the original file; vlanroute never rewrites it")
        except OSError as exc:
            out.failed[name] = FabricResult(name, RESTORE_FAILED, backup=rec.backup,
                                            message=f"cannot read {rec.backup}: {exc.strerror}")
            continue
        except UnicodeDecodeError:
            out.failed[name] = FabricResult(name, RESTORE_FAILED, backup=rec.backup,
                                            message=f"{rec.backup} is not text (damaged?)")
            continue
        except UserError as exc:
            out.failed[name] = FabricResult(name, RESTORE_FAILED, backup=rec.backup, message=exc.render())
            continue
        out.texts[name] = (text, rec.backup)
        out.save[name] = name in since
    return out


def _saved_since(state: FabricState, record: StateRecord) -> set[str]:
    """Switches some journal written after `record` may have saved (or saved uncertainly)."""
    out: set[str] = set()
    stamp = record.id.split("-", 1)[0]
    for path in sorted(state.pushes.glob("*.jsonl")) if state.pushes.is_dir() else []:
        if path.stem < stamp:
            continue
        try:
            view = read_journal(path, tolerant=True)
        except UserError:
            continue
        out |= {h.switch for h in view.switches.values() if h.ever_saved}
    return out


@dataclass
class RollbackPlan:
    wanted: Wanted
    results: dict[str, SwitchResult]             # every switch read: its current config
    change: Change | None
    transition: Transition | None
    refused: Refused | None
    unknown: dict[str, str]


def plan_rollback(pusher: Pusher, doc: PlanDocument, outdir: Path, state: FabricState, targets: Mapping[str, Target],
                  wanted: Wanted, workers: int, strict: bool) -> RollbackPlan:
    """Read every switch of the plan, then plan the transition to the wanted configs."""
    readable = list(targets.values())
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(readable) or 1))) as pool:
        results = {r.switch: r for r in pool.map(pusher.observe, readable)}
    fabric = fabric_of(doc, state, outdir)
    unknown = {n: r.message for n, r in results.items() if r.final_text is None}
    current: dict[str, tuple[str, SwitchConfig]] = {}
    want: dict[str, SwitchConfig] = {}
    for name, (text, source) in wanted.texts.items():
        t = targets.get(name)
        res = results.get(name)
        if t is None:
            wanted.failed[name] = FabricResult(name, RESTORE_FAILED, backup=source,
                                               message=f"not in this OUTDIR's plan: restore it by hand from {source}")
            continue
        if res is None or res.final_text is None:
            wanted.failed[name] = FabricResult(name, RESTORE_FAILED, backup=source,
                                               message=f"{res.message if res else 'not read'}: restore it by hand "
                                                       f"from {source}")
            continue
        try:
            want[name] = parse_target_config(t, text, str(source), strict)
            current[name] = (res.final_text, parse_target_config(t, res.final_text, f"{name} running-config", strict))
        except UserError as exc:
            wanted.failed[name] = FabricResult(name, RESTORE_FAILED, backup=source, message=exc.render())
    start: dict[str, SwitchView | None] = {}
    for name in fabric.switches:
        res, t = results.get(name), targets.get(name)
        if res is None or t is None or res.final_text is None:
            start[name] = None
            unknown.setdefault(name, res.message if res else "not in the plan, not read")
            continue
        cfg = current[name][1] if name in current else parse_target_config(t, res.final_text, f"{name} running-config", False)
        start[name] = view_of(cfg, fabric.ports_of(name))
    change = restore_change(fabric, targets, current, want)
    try:
        tr = plan_transition(change, start, {n: w for n, w in unknown.items() if n in start}, list(doc.switches),
                             workers)
    except Refused as exc:
        return RollbackPlan(wanted, results, change, None, exc, unknown)
    return RollbackPlan(wanted, results, change, tr, None, unknown)


def dry_results(plan: RollbackPlan, targets: Mapping[str, Target]) -> list[FabricResult]:
    out = []
    for name in plan.wanted.order:
        if name in plan.wanted.failed:
            out.append(plan.wanted.failed[name])
            continue
        prep = plan.change.whole.get(name) if plan.change else None
        source = plan.wanted.texts[name][1]
        then = "; then saved (the push had saved it)" if plan.wanted.save.get(name) else ""
        if prep is None:
            out.append(FabricResult(name, WOULD_RESTORE, backup=source,
                                    message="already equals its backup: nothing to send" + then, diff=[]))
        else:
            out.append(FabricResult(name, WOULD_RESTORE, backup=source, message=f"{len(prep.commands)} commands "
                                    f"would be sent{then}", diff=prep.diff))
    return out


def run_rollback(plan: RollbackPlan, pusher: Pusher, journal: Journal | None, state: FabricState, doc: PlanDocument,
                 outdir: Path, targets: Mapping[str, Target]) -> tuple[list[FabricResult], list[str]]:
    """Run the planned transition; one result per switch concerned, and the problems of the
    records that could not be written."""
    assert plan.change is not None and plan.transition is not None
    problems: list[str] = []
    texts = {n: (r.backup, r.final_text) for n, r in plan.results.items()}
    before = record(state, "before", "rollback", journal=journal.path if journal else None, doc=doc,
                    plan_sha256=None, outdir=outdir,
                    fabric=plan.change.fabric, texts=texts, unknown=plan.unknown)
    backups = {n: src for n, (_, src) in plan.wanted.texts.items()}
    done = run_transition(pusher, plan.change, plan.transition, backups, RESTORE_EVENTS, keep_going=True,
                          saves=plan.wanted.save)
    last: dict[str, SwitchResult] = {}
    sent: dict[str, int] = {}
    for job, res in done:
        last[job.target.name] = res
        sent[job.target.name] = sent.get(job.target.name, 0) + res.commands_sent
    out: list[FabricResult] = []
    for name in plan.wanted.order:
        source = plan.wanted.texts.get(name, (None, None))[1]
        if name in plan.wanted.failed:
            out.append(plan.wanted.failed[name])
            _note(journal, problems, J.RESTORE_FAILED, name, message=plan.wanted.failed[name].message)
            continue
        if name not in plan.change.whole:
            if not plan.wanted.save.get(name):
                out.append(FabricResult(name, RESTORED, 0, source, "already equals its backup: nothing sent"))
                _note(journal, problems, J.RESTORED, name, saved=False, commands_sent=0)
                continue
            # Nothing to send, but the startup config may hold a newer config: save it.
            saved_res = pusher.save_as_is(targets[name], parse_target_config(targets[name], plan.wanted.texts[name][0],
                                                                str(source), False), source, RESTORE_EVENTS)
            good = saved_res.result == APPLIED
            out.append(FabricResult(name, RESTORED if good else RESTORE_FAILED, 0, source,
                                    "already equals its backup: nothing sent; saved" if good else saved_res.message))
            continue
        got = last.get(name)
        if got is not None and got.result in (APPLIED, APPLIED_UNSAVED):
            res = got
            saved = res.result == APPLIED
            texts[name] = (None, res.final_text)
            out.append(FabricResult(name, RESTORED, sent.get(name, 0), source,
                                    "running config restored from the backup"
                                    + (" and saved" if saved else " (startup config untouched)")))
        else:
            why = got.message if got is not None else "not run"
            out.append(FabricResult(name, RESTORE_FAILED, sent.get(name, 0), source,
                                    f"{got.result if got else NOT_STARTED}: {why}: restore it by hand from {source}"))
            texts[name] = (None, got.final_text if got is not None else None)
    after = record(state, "after", "rollback", journal=journal.path if journal else None, doc=doc,
                   plan_sha256=None, outdir=outdir,
                   fabric=plan.change.fabric, texts=texts, unknown=plan.unknown)
    if before is None or after is None:
        problems.append("the fabric's state was not recorded (the state directory cannot be written)")
    return out, problems + pusher.journal_problems


def _note(journal: Journal | None, problems: list[str], event: str, switch: str, **fields: object) -> None:
    if journal is None:
        problems.append(f"{switch}: {event} not recorded: no journal could be written")
        return
    try:
        journal.append(event, switch, **fields)
    except J.JournalWriteError as exc:
        problems.append(f"{switch}: {event} not recorded: {exc.message}")


def make_pusher(outdir: Path, state: FabricState, creds: Credentials, policy: HostKeyPolicy, workers: int,
                strict: bool, journal: Journal | None) -> Pusher:
    options = PushOptions(workers=workers, keep_going=False, host_keys=policy, strict=strict, save=True)
    pusher = Pusher(outdir, state, creds, options, PushUI(), journal=journal)
    pusher.journal_required = False
    return pusher


__all__ = ["RollbackPlan", "Wanted", "dry_results", "list_states", "make_pusher", "plan_rollback", "run_rollback",
           "wanted_from_journal", "wanted_from_state"]
