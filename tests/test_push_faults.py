"""Faults during a push: each switch ends either fully applied or exactly as before.

Inventory: inventories/custom-lab.yaml (5 switches: core1, core2, leaf1, leaf2, leaf3),
one worker so the order is the sorted switch order and the --keep-going rule is visible.
core2 is the faulty one; it starts with a non-default config (an old VLAN 200 on two
ports) so that "rolled back" means "back to that", not just "back to factory".
"""

from __future__ import annotations

import pytest

from vlanroute.lab import Faults
from vlanroute.lab.state import PortState

from push_support import build_cluster, run, set_ssh_env

pytestmark = pytest.mark.timeout(300)
ORDER = ["core1", "core2", "leaf1", "leaf2", "leaf3"]
DESC = "PowerConnect 6248, 3.3.7.3, VxWorks 6.5"


def seed_old_config(sw) -> str:  # type: ignore[no-untyped-def]
    st = sw.state
    st.vlans.add(200)
    st.ports["1/g20"] = PortState(mode="general", pvid=200, untagged={1, 200})
    st.ports["1/g48"] = PortState(mode="general", untagged={1}, tagged={200})
    return sw.running_config()


def results(out: str) -> dict[str, str]:
    """switch -> result column of the final table."""
    found = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│")]
        if len(cells) > 3 and cells[1] in ORDER:
            found[cells[1]] = cells[2]
    return found


def push(capsys, cluster, *extra: str):  # type: ignore[no-untyped-def]
    return run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
               "--yes", "--workers", "1", *extra)


def untouched(sw) -> bool:  # type: ignore[no-untyped-def]
    return sw.config_commands == 0 and not sw.saved


@pytest.mark.parametrize("keep_going", [False, True])
def test_auth_refused_anywhere_changes_nothing_anywhere(farm, tmp_path, monkeypatch, capsys,
                                                        keep_going):
    """Every switch is logged in to and checked before any is changed (also under --yes
    and --keep-going): one refused login stops the whole push."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml",
                            {"core2": Faults(refuse_auth=True)})
    rc, out, err = push(capsys, cluster, *(["--keep-going"] if keep_going else []))
    assert rc == 1                     # ExitCode.FAILED_CHECK: nothing changed anywhere
    res = results(out)
    assert res["core2"] == "not-started" and "authentication refused" in out
    assert all(res[n] == "dry-run" for n in ORDER if n != "core2")
    assert "nothing was changed" in out and "core2" in out
    assert cluster.switch("core2").logins == 0
    for name in ORDER:
        assert untouched(cluster.switch(name)), name
        if name != "core2":
            assert cluster.switch(name).logins == 2        # the cabling check and the pre-flight, nothing more
    assert not list((cluster.state / "pushes").glob("*.jsonl"))   # no push began


@pytest.mark.parametrize("keep_going", [False, True])
def test_rejected_command_rolls_back(farm, tmp_path, monkeypatch, capsys, keep_going):
    set_ssh_env(monkeypatch)
    # The last phase is refused, so everything before it had been applied.
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml",
                            {"core2": Faults(reject=r"^spanning-tree disable$")})
    before = seed_old_config(cluster.switch("core2"))
    rc, out, err = push(capsys, cluster, *(["--keep-going"] if keep_going else []))
    assert rc == 3                     # ExitCode.PARTIAL: core1 changed, core2 did not
    res = results(out)
    assert res["core1"] == "applied" and res["core2"] == "rolled-back"
    core2 = cluster.switch("core2")
    assert core2.config_commands > 10                 # it really was half-applied
    assert core2.running_config() == before  # and is now exactly as before
    assert core2.saved == []                           # startup config never touched
    assert "rejected 'spanning-tree disable'" in out
    for name in ORDER[2:]:
        assert (res[name] == "applied") if keep_going else (res[name] == "skipped")
        assert bool(cluster.switch(name).saved) is keep_going


def test_connection_dropped_mid_push_rolls_back_over_a_new_session(farm, tmp_path, monkeypatch,
                                                                   capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml",
                            {"core2": Faults(drop_after=12)})
    before = seed_old_config(cluster.switch("core2"))
    rc, out, err = push(capsys, cluster)
    assert rc == 3                     # ExitCode.PARTIAL: core1 changed, core2 rolled back
    res = results(out)
    assert res["core2"] == "rolled-back", out
    core2 = cluster.switch("core2")
    assert core2.logins == 4            # the cabling check, the pre-flight, the push, the rollback session
    assert core2.running_config() == before
    assert core2.saved == []
    assert all(res[n] == "skipped" for n in ORDER[2:])


def test_stale_vlans_on_managed_ports_are_removed_before_stp_off(farm, tmp_path, monkeypatch,
                                                                 capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    core2 = cluster.switch("core2")
    seed_old_config(core2)
    inter = [p for p, d in cluster.plan["switches"]["core2"]["ports"].items()
             if d["role"] == "inter-switch"][0]
    core2.state.ports[inter] = PortState(mode="general", untagged={1}, tagged={200})
    rc, out, err = push(capsys, cluster, "--switch", "core2")
    assert rc == 0, out + err
    assert 200 not in core2.state.ports[inter].tagged
    wire = core2.received
    removal = wire.index("switchport general allowed vlan remove 200")
    assert removal < min(i for i, c in enumerate(wire) if c == "spanning-tree disable")
    assert 200 in core2.state.vlans                    # VLANs themselves are not deleted


def test_dry_run_backs_up_shows_diff_and_sends_nothing(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--dry-run", "--workers", "5")
    assert rc == 0, out + err
    for name in ORDER:
        sw = cluster.switch(name)
        assert untouched(sw)
        assert len(cluster.backups(name)) == 1
    assert not (cluster.outdir / "backups").exists()     # never inside OUTDIR
    # A summary line per switch by default (12 switches once printed 5,996 lines) ...
    assert all(any(line.startswith(f"{n}: ") and "commands" in line for line in out.splitlines()) for n in ORDER)
    assert "+interface ethernet" not in out
    assert out.count("dry-run") >= 5
    # ... and the parsed change with every command on request.
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--dry-run", "--show-commands")
    assert rc == 0 and "+interface ethernet" in out and "spanning-tree disable" in out


def test_without_yes_asks_and_no_answer_changes_nothing(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    monkeypatch.setattr("vlanroute.commands.push._interactive", lambda: True)   # a person at a terminal
    monkeypatch.setattr("click.confirm", lambda *a, **k: False)
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--switch", "leaf1")
    assert rc == 1
    assert untouched(cluster.switch("leaf1"))
    monkeypatch.setattr("click.confirm", lambda *a, **k: True)
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--switch", "leaf1")
    assert rc == 0, out + err
    assert cluster.switch("leaf1").saved and untouched(cluster.switch("leaf2"))
