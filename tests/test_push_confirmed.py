"""Issue 24, item 2: push sends what was confirmed. The bundle is read once and its digest
taken before the diff is shown; if anything under OUTDIR changed by the time the person
answers, push refuses before the first command. Ctrl-C at the question always ends it.

Tests named test_catalogue_* are cases of the issue's catalogue (`pytest -k catalogue`)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from push_support import REPO, Cluster, build_cluster, run, set_ssh_env

from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import RenderOptions, render_to_dir

pytestmark = pytest.mark.timeout(300)


def _sets(cluster: Cluster) -> list[str]:
    """The --set lines build_cluster planned with (loopback targets)."""
    out = []
    for name, sw in cluster.farm.switches.items():
        out += [f"switches.{name}.mgmt={sw.host}", f"switches.{name}.ssh_port={sw.port}"]
    return out


def _at_the_question(monkeypatch: pytest.MonkeyPatch, answer) -> list[str]:  # type: ignore[no-untyped-def]
    """A person at a terminal; `answer(question)` runs while push waits for them."""
    asked: list[str] = []

    def confirm(question: str, err: bool = False) -> bool:
        asked.append(question)
        return bool(answer(question))

    monkeypatch.setattr("vlanroute.commands.push._interactive", lambda: True)
    monkeypatch.setattr("click.confirm", confirm)
    return asked


def _journals(cluster: Cluster) -> list[Path]:
    return sorted((cluster.state / "pushes").glob("*.jsonl")) if (cluster.state / "pushes").is_dir() else []


def test_catalogue_outdir_rerendered_while_push_waits_is_refused(farm, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """catalogue: pushed-not-reviewed. While push waits at the question, OUTDIR is rendered
    again from another inventory (first VLAN 301); answering y must send nothing."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    other = plan_from_file(REPO / "inventories" / "custom-lab.yaml",
                           [*_sets(cluster), "routing.first_vlan=301"]).to_document()

    def rerender(question: str) -> bool:
        render_to_dir(other, cluster.outdir, RenderOptions(verify=False))
        return True

    asked = _at_the_question(monkeypatch, rerender)
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts))
    assert asked, err
    assert "vlan 301" in (cluster.outdir / "switches" / "core1.cfg").read_text().lower()   # it did change
    assert rc == 2, out + err
    assert "OUTDIR changed after it was read" in err and "switches/core1.cfg" in err
    assert "Nothing was sent to any switch" in err and "Traceback" not in err
    assert all(sw.config_commands == 0 for sw in farm.switches.values())
    assert all("301" not in sw.running_config() for sw in farm.switches.values())
    assert _journals(cluster) == []          # no push began


def test_a_file_added_to_outdir_while_push_waits_is_refused(farm, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    _at_the_question(monkeypatch, lambda q: (cluster.outdir / "hosts" / "late.sh").write_text("x\n") or True)
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts))
    assert rc == 2 and "hosts/late.sh" in err, out + err
    assert all(sw.config_commands == 0 for sw in farm.switches.values())


def test_an_unchanged_outdir_is_pushed_after_the_question(farm, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """The control: the same flow with nothing changed pushes every switch."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    asked = _at_the_question(monkeypatch, lambda q: True)
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts))
    assert rc == 0 and asked, out + err
    assert all(sw.config_commands > 0 for sw in farm.switches.values())


@pytest.mark.parametrize("inherited", [signal.default_int_handler, signal.SIG_IGN])
def test_catalogue_ctrl_c_at_the_question_is_never_ignored(farm, tmp_path, monkeypatch, capsys,  # type: ignore[no-untyped-def]
                                                           inherited) -> None:
    """catalogue: faults. SIGINT arriving while the question is asked ends push with 130
    and changes nothing, even when the process inherited SIGINT ignored (started in the
    background by a shell) or a handler of the preview was still in place."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    _at_the_question(monkeypatch, lambda q: os.kill(os.getpid(), signal.SIGINT) or True)
    previous = signal.signal(signal.SIGINT, inherited)
    try:
        rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert rc == 130, out + err
    assert all(sw.config_commands == 0 for sw in farm.switches.values())
    assert _journals(cluster) == []
