"""Push through a switch CLI's own transaction (vlanroute.drivers.family.Transaction):
Arista EOS configure sessions, Dell OS10 `start transaction`.

The NAPALM lifecycle with the switch doing the bookkeeping: take a restore point where the
CLI has one, open the transaction, type the rendered commands (already in loop-safe
order and checked, vlanroute.device.order), read the switch's own diff of the pending
change, commit. Nothing takes effect before the commit, so a rejected command or a lost
session before it is undone by discarding the transaction: the running config never
changed, which push checks by reading it back. After the commit the running config is
read back and compared with the prediction, and the inter-switch ports' spanning-tree state
read (vlanroute.device.stpstate), as on any family; if either fails, the restore
point is loaded (EOS `configure replace checkpoint:`), or, where the CLI has none, the
inverse commands are committed in a new transaction. Only then is the config saved
(unless push --no-save: the commit changes the running config only, as on any family).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, UTC
import re
from typing import TYPE_CHECKING

from vlanroute.device.results import (APPLIED, APPLIED_UNSAVED, NOT_STARTED, ROLLBACK_FAILED, ROLLED_BACK,
                                      SAVE_UNCERTAIN, Prepared, PushUI, SwitchResult)
from vlanroute.device import readback, stpstate
from vlanroute.device.journal import JournalWriteError
from vlanroute.device.session import CommandRejected, ConnectionLost, SaveFailed, SessionError, SwitchSession
from vlanroute.drivers.family import Family, Transaction
from vlanroute.errors import UserError

if TYPE_CHECKING:
    from vlanroute.device.targets import Target


def transaction_name() -> str:
    """A name unique to this push: letters, digits and `-` only (every CLI takes that)."""
    return "vlanroute-" + datetime.now(UTC).strftime("%Y%m%d-%H%M%S-%f")


# The name a transaction gets when it opens (transaction_name); a preview shows this instead.
PREVIEW_NAME = "vlanroute-<UTC date and time of the push>"
# What SwitchSession.running_config and SwitchSession.save send first: back to privileged mode.
_READ_BACK = ("end", "show running-config")


def planned_commands(family: Family, commands: list[str], *, save: bool = True,
                     name: str | None = None, stp: Sequence[str] = ()) -> list[str]:
    """Every line push sends to apply `commands` (the rendered lines, `configure` ... `end`,
    with their fixups) when all goes well, in send order: for a family with a transaction
    the restore point, the transaction's opening (OS10 `lock`, `start transaction`), the
    lines, the switch's diff, the commit (and `unlock`); then the read-back of the running
    config and the spanning-tree state's read (`stp`: vlanroute.device.stpstate.read_commands),
    the save (with the key that answers its question, where it asks one) unless
    `save` is False (push --no-save), and the restore point's removal. This is what
    `push --dry-run --show-commands` lists (docs/push.md); `name`: the transaction's, else
    PREVIEW_NAME. Not listed: the read-only pre-flight before (`show running-config`,
    `show version`, the port list, context help) and what a failure sends instead (discard,
    rollback)."""
    cli = family.cli
    saving: list[str] = []
    if save and cli is not None:
        saving = ["end", cli.save_command] + ([cli.save_answer or "y"] if cli.save_confirm else [])
    tx = family.transaction
    if tx is None:
        return [*commands, *_READ_BACK, *stp, *saving]
    label = name or PREVIEW_NAME

    def fmt(lines: tuple[str, ...]) -> list[str]:
        return [c.format(name=label) for c in lines]

    parts = undo_parts(tx, body(tx, commands)) or [[]]
    sent: list[str] = []
    for i, part in enumerate(parts):
        sent += [*fmt(tx.begin), *part, *([tx.diff] if tx.diff and i == 0 else []), *fmt(tx.commit)]
    return [*fmt(tx.checkpoint), *sent, *_READ_BACK, *stp, *saving, *fmt(tx.cleanup)]


def body(tx: Transaction, commands: list[str]) -> list[str]:
    """The rendered commands without the configuration-mode lines the transaction replaces."""
    out = list(commands)
    if out and out[0] == tx.enter:
        out = out[1:]
    if out and out[-1] == tx.leave:
        out = out[:-1]
    return out


def apply_in_transaction(target: Target, session: SwitchSession, prep: Prepared, res: SwitchResult,
                         ui: PushUI, canonical: Callable[[str], list[str]],
                         reconnect: Callable[[], SwitchSession], save: bool = True,
                         before_save: Callable[[], None] = lambda: None) -> SwitchResult:
    """Push `prep.commands` inside the family's transaction; `canonical(text)` parses a
    running config into push's canonical view; `reconnect()` opens a new session.
    `save` False (push --no-save): committed and verified, the startup config left alone."""
    tx = target.family.transaction
    assert tx is not None
    name = transaction_name()

    def fmt(commands: tuple[str, ...]) -> list[str]:
        return [c.format(name=name) for c in commands]

    commands = body(tx, prep.commands)
    res.commands = planned_commands(target.family, prep.commands, save=save, name=name,
                                    stp=stpstate.read_commands(target, prep.predicted))
    want_before = canonical(prep.running_text)
    ui.total(target.name, len(commands))
    try:
        for c in fmt(tx.checkpoint):
            session.run(c)
    except SessionError as exc:
        res.result, res.message = NOT_STARTED, f"not changed: the restore point could not be taken ({exc})"
        return res
    ui.status(target.name, "applying (transaction)")
    sent = 0
    problem = ""
    committed = False
    pending = False                      # a later part's transaction is open
    try:
        # Lines the family commits apart (OS10's VLAN deletions: "Range configuration
        # conflict" otherwise) go in a second transaction, after the rest is committed.
        for i, part in enumerate(undo_parts(tx, commands) or [[]]):
            for c in fmt(tx.begin):
                session.run(c)
            pending = committed
            for c in part:
                session.run(c)
                sent += 1
                ui.advance(target.name)
            if tx.diff and i == 0:
                res.switch_diff = [line for line in session.run(tx.diff, check=False).splitlines() if line.strip()]
            for c in fmt(tx.commit):
                session.run(c)
                committed = True             # the first commit command took: the change is live
            pending = False
    except CommandRejected as exc:
        problem = str(exc)
    except ConnectionLost as exc:
        problem = str(exc)
        session = None  # type: ignore[assignment]
    res.commands_sent = sent
    if problem and not committed:
        return _discard(target, session, tx, fmt, res, problem, want_before, canonical, reconnect)
    if problem:
        if pending and session is not None:
            try:                          # the later part's candidate must not go live with anyone's commit
                for c in fmt(tx.abort):
                    session.run(c, check=False)
            except SessionError:
                session = None  # type: ignore[assignment]
        return _restore(target, session, tx, fmt, prep, res, problem, want_before, canonical, reconnect)
    # Committed: the running config must be the predicted one before it is saved.
    ui.status(target.name, "checking")
    try:
        after = canonical(session.running_config())
    except (SessionError, UserError) as exc:
        text = exc.render() if isinstance(exc, UserError) else str(exc)
        return _restore(target, None, tx, fmt, prep, res, f"cannot read the running config back: {text}",
                        want_before, canonical, reconnect)
    predicted = [line.text for line in target.family.canonical_lines(prep.predicted)]
    try:
        check = readback.compare(target.family, predicted, after, lambda c: session.run(c, check=False))
    except SessionError as exc:
        return _restore(target, None, tx, fmt, prep, res, f"cannot read the running config back: {exc}",
                        want_before, canonical, reconnect)
    if check.differences:
        return _restore(target, session, tx, fmt, prep, res, "running config after the commit differs from "
                        "the prediction: " + "; ".join(check.differences[:3]), want_before, canonical, reconnect)
    # Issue 41 item 10: every inter-switch port the plan has forwarding must forward.
    ui.status(target.name, "checking spanning tree")
    try:
        stp = stpstate.check(target, session.run, prep.predicted)
    except SessionError as exc:
        return _restore(target, None, tx, fmt, prep, res, f"cannot read the spanning-tree state: {exc}",
                        want_before, canonical, reconnect)
    if blocked := stpstate.blocked(stp):
        return _restore(target, session, tx, fmt, prep, res, stpstate.problem(blocked), want_before,
                        canonical, reconnect)
    note = ("; note: " + "; ".join(check.notes[:2]) + (f" (and {len(check.notes) - 2} more)"
                                                        if len(check.notes) > 2 else "")) if check.notes else ""
    note += stpstate.down_note(stp)
    if not save:
        _cleanup(session, tx, fmt)
        res.result = APPLIED_UNSAVED
        res.message = "applied in one transaction and verified, NOT saved: `vlanroute save OUTDIR` commits it" + note
        return res
    ui.status(target.name, "saving")
    try:
        before_save()                # the journal's `saving` record; JournalWriteError: no save
    except JournalWriteError as exc:
        return _restore(target, session, tx, fmt, prep, res, f"not saved: {exc.message}",
                        want_before, canonical, reconnect)
    try:
        session.save()
    except SaveFailed as exc:
        if not exc.startup_may_have_changed:
            return _restore(target, session, tx, fmt, prep, res, f"the save was refused before it began ({exc})",
                            want_before, canonical, reconnect)
        res.result = SAVE_UNCERTAIN
        res.message = (f"applied and verified, but the save did not confirm ({exc}): the startup config "
                       f"may have changed. The running config is left as pushed; check it and save by hand "
                       f"({target.family.cli.save_command if target.family.cli else 'save'}), or restore {res.backup}")
        return res
    _cleanup(session, tx, fmt)
    res.result, res.message = APPLIED, "applied in one transaction, verified and saved" + note
    return res


def _session(session: SwitchSession | None, reconnect: Callable[[], SwitchSession]) -> SwitchSession:
    return session if session is not None else reconnect()


def _discard(target, session, tx, fmt, res, problem, want_before, canonical, reconnect):  # type: ignore[no-untyped-def]
    """Before the commit: discard the transaction; the running config must be unchanged."""
    try:
        if session is None:
            session = reconnect()
            # The pending transaction of the lost session: enter it again to discard it.
            for c in fmt(tx.begin):
                session.run(c, check=False)
        for c in fmt(tx.abort):
            session.run(c, check=False)
        now = canonical(session.running_config())
        _cleanup(session, tx, fmt)
    except (SessionError, UserError) as exc:
        text = exc.render() if isinstance(exc, UserError) else str(exc)
        res.result = ROLLBACK_FAILED
        res.message = (f"{problem}; the transaction could not be discarded ({text}): check the switch, "
                       f"its backup is {res.backup}")
        return res
    if now != want_before:
        res.result = ROLLBACK_FAILED
        res.message = f"{problem}; after discarding the transaction the running config differs from {res.backup}"
        return res
    res.result = ROLLED_BACK
    res.message = f"{problem}; the transaction was discarded: nothing was applied (startup config untouched)"
    return res


def _restore(target, session, tx, fmt, prep, res, problem, want_before, canonical, reconnect):  # type: ignore[no-untyped-def]
    """After the commit: back to the restore point, or commit the inverse commands."""
    try:
        session = _session(session, reconnect)
        if tx.restore:
            how = "restore point"
            for c in fmt(tx.restore):
                session.run(c)
        else:
            current = target.family.parse_running(session.running_config(), switch=target.name,
                                                  platform=target.platform, source=f"{target.name} running-config")
            parts = undo_parts(tx, body(tx, target.family.delta_commands(current, prep.running)))
            how = ("inverse commands, committed in one transaction" if len(parts) < 2 else
                   f"inverse commands, committed in {len(parts)} transactions (VLANs deleted in the last)")
            for part in parts:
                session = _commit_undo(session, tx, fmt, part, res, reconnect)
        back = canonical(session.running_config())
        _cleanup(session, tx, fmt)
    except UndoRefused as exc:
        res.result = ROLLBACK_FAILED
        res.message = (f"{problem}; rollback failed ({exc}): the switch may be HALF-APPLIED, restore it "
                       f"from {res.backup}")
        return res
    except (SessionError, UserError) as exc:
        text = exc.render() if isinstance(exc, UserError) else str(exc)
        res.result = ROLLBACK_FAILED
        res.message = (f"{problem}; rollback failed ({text}): the switch may be HALF-APPLIED, restore it "
                       f"from {res.backup}")
        return res
    if back != want_before:
        res.result = ROLLBACK_FAILED
        res.message = f"{problem}; after rollback the running config still differs from {res.backup}: restore it by hand"
        return res
    res.result = ROLLED_BACK
    res.message = f"{problem}; rolled back to the backup by the {how} (startup config untouched)"
    return res


class UndoRefused(Exception):
    """An inverse command was refused, or the session lost, inside an undo transaction; the
    message says whether the transaction's pending part was discarded."""


def undo_parts(tx: Transaction, undo: list[str]) -> list[list[str]]:
    """The inverse commands in the transactions they are committed in: one, or, where the
    family names lines that must wait for a commit of their own (`Transaction.apart`: OS10's
    VLAN deletions), the rest first and those last. No empty transaction."""
    if not tx.apart:
        return [undo] if undo else []
    last = [c for c in undo if re.fullmatch(tx.apart, c)]
    first = [c for c in undo if not re.fullmatch(tx.apart, c)]
    return [part for part in (first, last) if part]


def _commit_undo(session: SwitchSession, tx: Transaction, fmt: Callable[[tuple[str, ...]], list[str]],
                 lines: list[str], res: SwitchResult, reconnect: Callable[[], SwitchSession]) -> SwitchSession:
    """Open a transaction, type `lines`, commit. A refused line or a lost session discards
    the transaction before UndoRefused: on a CLI whose sessions share one candidate config
    (OS10: "All sessions in Transaction-Based Configuration mode update the same candidate
    configuration", and anyone's commit, or any change outside a transaction, commits it
    [UG]), a half-typed undo left pending would go live with the next change anyone makes."""
    try:
        for c in fmt(tx.begin):
            session.run(c)
        for c in lines:
            session.run(c)
            res.commands_sent += 1
        for c in fmt(tx.commit):
            session.run(c)
        return session
    except CommandRejected as exc:
        why = str(exc)
        lost = False
    except ConnectionLost as exc:
        why, lost = str(exc), True
    try:
        if lost:
            session = reconnect()
            for c in fmt(tx.begin):          # the pending candidate of the lost session: enter it
                session.run(c, check=False)
        for c in fmt(tx.abort):
            session.run(c, check=False)
    except (SessionError, UserError) as exc:
        text = exc.render() if isinstance(exc, UserError) else str(exc)
        raise UndoRefused(f"{why}; the pending undo could NOT be discarded ({text}): type "
                          f"`{' / '.join(tx.abort)}` on the switch before anyone changes its config") from None
    raise UndoRefused(f"{why}; the pending undo was discarded, none of it went live")


def _cleanup(session: SwitchSession, tx: Transaction, fmt: Callable[[tuple[str, ...]], list[str]]) -> None:
    for c in fmt(tx.cleanup):
        try:
            session.run(c, check=False)
        except SessionError:
            pass
