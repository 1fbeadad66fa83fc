"""The second step of a two-step push (`vlanroute save`), and what the fabric rollback
(vlanroute.device.rollback) reads of the last push journal (vlanroute.device.journal).

save: each switch the journal shows as applied and not saved is logged in to; its running
config must still be the one the push verified (same canonical text, sha256 in the
journal), and only then is it saved. A switch whose change was split and stopped between
its steps (`stepped`) is not: its running config is half the change.

rollback: every switch the last push touched (an `applying` record: a command may have
been sent), with the backup taken before its first change (`_read_backup` checks it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vlanroute.device import journal as J
from vlanroute.device.credentials import Credentials
from vlanroute.device.journal import Journal, JournalView, SwitchHistory, sha256_lines, sha256_text
from vlanroute.device.push import canonical_of, parse_target_config
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
            running = parse_target_config(target, session.running_config(), f"{name} running-config", strict)
            if sha256_lines(canonical_of(target, running)) != history.last.get("running_sha256"):
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
