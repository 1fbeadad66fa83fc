"""The push journal on its own: what a crash leaves behind is still readable, states and
the rollback order come from the records, and a journal of another fabric is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlanroute.device import journal as J
from vlanroute.device.fabric import rollback_order, unsaved
from vlanroute.device.journal import Journal, read_journal, require_last_journal
from vlanroute.device.statedir import FabricState, default_state_dir, fabric_name
from vlanroute.errors import UserError


def _push(state: FabricState) -> Journal:
    journal = Journal.create(state, outdir="/x/out", plan="lab", plan_sha256="0" * 64, save=False,
                             switches=["a", "b", "c"])
    for name in ("b", "a", "c"):              # started in this order (workers > 1)
        journal.append(J.APPLYING, name, backup=f"/s/backups/{name}.cfg", backup_sha256="1" * 64)
    journal.append(J.APPLIED, "b", saved=False, running_sha256="2" * 64)
    journal.append(J.APPLIED, "a", saved=False, running_sha256="3" * 64)
    journal.append(J.SAVED, "a")
    return journal


def test_states_order_and_a_line_cut_short_by_a_crash(tmp_path: Path) -> None:
    journal = _push(FabricState(tmp_path / "state"))
    with open(journal.path, "a") as fh:
        fh.write('{"time": "...", "event": "appl')           # the crash
    view = read_journal(journal.path)
    assert not view.ended
    assert {n: h.state for n, h in view.switches.items()} == {"a": "saved", "b": "applied", "c": "applying"}
    assert [h.switch for h in unsaved(view)] == ["b"]
    assert [h.switch for h in rollback_order(view)] == ["c", "a", "b"]   # last started first
    assert view.switches["a"].ever_saved and not view.switches["b"].ever_saved
    assert view.switches["c"].backup == Path("/s/backups/c.cfg")
    assert oct(journal.path.stat().st_mode & 0o777) == "0o600"


def test_a_resumed_push_restores_the_backup_taken_before_the_first_change(tmp_path: Path) -> None:
    """A crash left c half-applied; `push --resume` backs c up again (its half-applied config)
    and finishes it. Rollback must restore c's first backup, in the order of first starts."""
    journal = _push(FabricState(tmp_path / "state"))
    journal.append("resume", switches=["b", "c"], save=False)
    journal.append(J.APPLYING, "c", backup="/s/backups/c-half.cfg", backup_sha256="4" * 64)
    journal.append(J.APPLIED, "c", saved=False, running_sha256="5" * 64)
    view = read_journal(journal.path)
    c = view.switches["c"]
    assert c.state == "applied" and c.backup == Path("/s/backups/c.cfg") and c.backup_sha256 == "1" * 64
    assert [h.switch for h in rollback_order(view)] == ["c", "a", "b"]


def test_a_damaged_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    journal = _push(FabricState(tmp_path / "state"))
    lines = journal.path.read_text().splitlines()
    lines[2] = "garbage"
    journal.path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError, match="line 3 is not a journal record"):
        read_journal(journal.path)


def test_the_last_journal_of_another_plan_is_refused(tmp_path: Path) -> None:
    state = FabricState(tmp_path / "state")
    _push(state)
    _, view = require_last_journal(state, tmp_path, "lab", "rollback")
    assert view.header["plan"] == "lab" and json.loads(view.path.read_text().splitlines()[0])["journal"] == J.FORMAT
    with pytest.raises(UserError, match="for plan 'lab', not 'other'"):
        require_last_journal(state, tmp_path, "other", "rollback")


def test_state_dir_default_follows_xdg_and_the_plan_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_state_dir("seed-torus") == tmp_path / "xdg" / "vlanroute" / "seed-torus"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_state_dir("x") == tmp_path / "home" / ".local" / "state" / "vlanroute" / "x"
    assert fabric_name(None, Path("/a/my out")) == "my_out" and fabric_name("lab", Path("/a/b")) == "lab"


def test_a_state_dir_inside_outdir_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Render replaces OUTDIR as a whole: backups kept in it would be lost (issue 13, part 7)."""
    out = tmp_path / "out"
    out.mkdir()
    for inside in (out, out / "state", out / "a" / ".." / "state"):
        with pytest.raises(UserError, match="inside OUTDIR") as exc:
            FabricState.choose(inside, "lab", out)
        assert exc.value.field == "--state-dir"
    (tmp_path / "link").symlink_to(out)                     # the same place under another name
    with pytest.raises(UserError, match="inside OUTDIR"):
        FabricState.choose(tmp_path / "link" / "state", "lab", out)
    monkeypatch.setenv("XDG_STATE_HOME", str(out / "xdg"))  # the default, too
    with pytest.raises(UserError, match="inside OUTDIR") as exc:
        FabricState.choose(None, "lab", out)
    assert exc.value.field == "XDG_STATE_HOME"
    assert FabricState.choose(tmp_path / "outside", "lab", out).path == tmp_path / "outside"
    assert FabricState.choose(tmp_path / "out-state", "lab", out).path == tmp_path / "out-state"
