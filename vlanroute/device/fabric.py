"""The second step of a two-step push (`vlanroute save`) and the fabric rollback
(`vlanroute rollback`), both driven by the last push journal (vlanroute.device.journal).

save: each switch the journal shows as applied and not saved is logged in to; its running
config must still be the one the push verified (same canonical text, sha256 in the
journal), and only then is it saved.

rollback: every switch the last push touched (an `applying` record: a command may have
been sent) is put back to the backup taken before its first change, in the reverse order
the push started them. On each switch the family's delta puts spanning tree back on before
any VLAN membership changes (vlanroute.drivers.*.delta), the reverse of the push's loop-safe
order; the result must equal the backup's parsed config. A switch whose startup config
may hold the pushed config (saved, or SAVE-UNCERTAIN) is saved again after its rollback, so
a reboot does not bring the pushed config back; a switch never saved is left unsaved (its
startup config is still the old one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import difflib
from pathlib import Path

from vlanroute.device import journal as J
from vlanroute.device.credentials import Credentials
from vlanroute.device.journal import Journal, JournalView, JournalWriteError, SwitchHistory, sha256_lines, sha256_text
from vlanroute.device.push import RestoreMismatch, _canonical, _parse, restore_running
from vlanroute.device.session import ConnectFailed, HostKeyPolicy, SaveFailed, SessionError, SwitchSession
from vlanroute.device.targets import Target
from vlanroute.errors import UserError

# Results of save and rollback, per switch.
SAVED, NOT_SAVED, SAVE_UNCERTAIN = "saved", "not-saved", "SAVE-UNCERTAIN"
RESTORED, WOULD_RESTORE, RESTORE_FAILED = "restored", "would-restore", "RESTORE-FAILED"


@dataclass
class FabricResult:
    switch: str
    result: str
    commands_sent: int = 0
    backup: Path | None = None
    message: str = ""
    diff: list[str] | None = None

    def to_json(self) -> dict[str, object]:
        return {"switch": self.switch, "result": self.result, "commands_sent": self.commands_sent,
                "backup": str(self.backup) if self.backup else None, "message": self.message}


Connect = Callable[..., SwitchSession]


def _session(connect: Connect, target: Target, creds: Credentials,
             policy: HostKeyPolicy) -> SwitchSession:
    return connect(target.cli, target.host, target.port, creds, policy)


def unsaved(view: JournalView) -> list[SwitchHistory]:
    """Switches applied and verified but not saved: their last record is `applied`."""
    return [h for h in view.switches.values() if h.state == J.APPLIED]


def save_fabric(view: JournalView, journal: Journal, targets: dict[str, Target],
                creds: Credentials, policy: HostKeyPolicy, strict: bool = False,
                connect: Connect = SwitchSession,
                done: Callable[[FabricResult], None] = lambda r: None) -> list[FabricResult]:
    """Save every unsaved switch of the journal whose running config is still as pushed."""
    results = []
    for history in unsaved(view):
        name = history.switch
        res = FabricResult(name, NOT_SAVED, backup=history.backup)
        target = targets.get(name)
        if target is None:
            res.message = "not in this OUTDIR's plan: not saved"
            results.append(res)
            done(res)
            continue
        try:
            session = _session(connect, target, creds, policy)
        except ConnectFailed as exc:
            res.message = f"not saved: {exc}"
            results.append(res)
            done(res)
            continue
        try:
            running = _parse(target, session.running_config(), f"{name} running-config", strict)
            if sha256_lines(_canonical(target, running)) != history.last.get("running_sha256"):
                res.message = ("not saved: the running config changed since the push verified "
                               "it; push again, or roll back")
            else:
                session.save()
                res.result, res.message = SAVED, "saved"
                journal.append(J.SAVED, name, by="save")
        except SaveFailed as exc:
            if exc.startup_may_have_changed:
                res.result = SAVE_UNCERTAIN
                res.message = (f"the save did not confirm ({exc}): the startup config may have "
                               "changed; check `show startup-config`")
                journal.append(J.SAVE_UNCERTAIN, name, by="save", message=str(exc))
            else:
                res.message = f"not saved: {exc}"
        except (SessionError, UserError) as exc:
            res.message = f"not saved: {exc.render() if isinstance(exc, UserError) else exc}"
        finally:
            session.close()
        results.append(res)
        done(res)
    return results


MAX_BACKUP_BYTES = 16 << 20      # a running config is kilobytes


def _note(journal: Journal | None, problems: list[str], event: str, switch: str, **fields: object) -> None:
    """Record what was done; a record that cannot be written is named, not raised: the
    rollback goes on with the other switches."""
    if journal is None:
        return
    try:
        journal.append(event, switch, **fields)
    except JournalWriteError as exc:
        problems.append(f"{switch}: {event} not recorded: {exc.message}")


def rollback_order(view: JournalView) -> list[SwitchHistory]:
    """Touched switches, the last started first (the order of their first `applying`)."""
    return sorted(view.touched, key=lambda h: h.started_at, reverse=True)


def _read_backup(history: SwitchHistory) -> str:
    path = history.backup
    if path is None:
        raise UserError(f"the journal names no backup for {history.switch}",
                        fix="restore it by hand from the backups in the state directory")
    try:
        if path.stat().st_size > MAX_BACKUP_BYTES:
            raise UserError(f"the backup of {history.switch} is larger than {MAX_BACKUP_BYTES >> 20} MiB: "
                            "not a running config", file=str(path), fix="restore the file from your own copies")
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise UserError(f"cannot read the backup of {history.switch}: {exc.strerror}",
                        file=str(path), fix="restore the file from your own copies") from None
    except UnicodeDecodeError:
        raise UserError(f"the backup of {history.switch} is not text (damaged?)",
                        file=str(path), fix="restore the file from your own copies") from None
    if history.backup_sha256 and sha256_text(text) != history.backup_sha256:
        raise UserError(f"the backup of {history.switch} changed since the push (sha256 differs "
                        "from the journal's)", file=str(path),
                        fix="restore the original backup file; it is never rewritten by vlanroute")
    return text


def rollback_fabric(view: JournalView, journal: Journal | None, targets: dict[str, Target],
                    creds: Credentials, policy: HostKeyPolicy, dry_run: bool = False,
                    strict: bool = False, connect: Connect = SwitchSession,
                    done: Callable[[FabricResult], None] = lambda r: None,
                    journal_problems: list[str] | None = None) -> list[FabricResult]:
    """Put every switch touched by the journal's push back to its backup (module docstring).
    `journal` None or `dry_run`: change nothing, show what would be sent. One switch that
    cannot be restored (its backup unreadable, an unexpected error) never stops the others;
    journal records that cannot be written are added to `journal_problems`."""
    results = []
    problems = journal_problems if journal_problems is not None else []
    for history in rollback_order(view):
        try:
            res = _rollback_one(history, journal, targets, creds, policy, dry_run, strict, connect, problems)
        except Exception as exc:  # noqa: BLE001 - one switch must not stop the others' rollback
            res = FabricResult(history.switch, RESTORE_FAILED, backup=history.backup,
                               message=f"unexpected error: {type(exc).__name__}: {exc}: restore it by hand "
                                       f"from {history.backup}")
            _note(journal if not dry_run else None, problems, J.RESTORE_FAILED, history.switch,
                  message=res.message)
        results.append(res)
        done(res)
    return results


def _rollback_one(history: SwitchHistory, journal: Journal | None, targets: dict[str, Target],
                  creds: Credentials, policy: HostKeyPolicy, dry_run: bool, strict: bool,
                  connect: Connect, problems: list[str]) -> FabricResult:
    name = history.switch
    res = FabricResult(name, RESTORE_FAILED, backup=history.backup)
    target = targets.get(name)
    if target is None:
        res.message = f"not in this OUTDIR's plan: restore it by hand from {history.backup}"
        return res
    try:
        text = _read_backup(history)
        want = _parse(target, text, str(history.backup), strict)
    except UserError as exc:
        res.message = exc.render()
        return res
    try:
        session = _session(connect, target, creds, policy)
    except ConnectFailed as exc:
        res.message = f"{exc}: restore it by hand from {history.backup}"
        return res
    try:
        if dry_run or journal is None:
            current = _parse(target, session.running_config(), f"{name} running-config", strict)
            res.result = WOULD_RESTORE
            res.diff = list(difflib.unified_diff(
                _canonical(target, current), _canonical(target, want),
                f"{name} running-config", f"{name} backup", lineterm="", n=0))
            # The delta of two equal configs is still `configure`, `end`: say what it means.
            undo = target.family.delta_commands(current, want) if res.diff else []
            res.message = ((f"{len(undo)} commands would be sent" if undo
                            else "already equals its backup: nothing to send")
                           + ("; then saved (the push had saved it)" if history.ever_saved else ""))
        else:
            try:            # ahead of the first command, as push does
                journal.append(J.RESTORING, name, backup=str(history.backup))
            except JournalWriteError as exc:
                res.message = f"not changed: {exc.message}"
                return res
            res.commands_sent = restore_running(target, session, want, strict)
            saved = history.ever_saved
            if saved:
                session.save()
            res.result = RESTORED
            res.message = ("running config restored from the backup"
                           + (" and saved" if saved else " (startup config untouched)"))
            _note(journal, problems, J.RESTORED, name, saved=saved, commands_sent=res.commands_sent)
    except (SessionError, UserError, RestoreMismatch) as exc:
        text = exc.render() if isinstance(exc, UserError) else str(exc)
        res.result = RESTORE_FAILED
        res.message = f"{text}: restore it by hand from {history.backup}"
        _note(None if dry_run else journal, problems, J.RESTORE_FAILED, name, message=text)
    finally:
        session.close()
    return res
