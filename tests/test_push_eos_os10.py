"""Push and audit against emulated Arista EOS and Dell OS10 switches over SSH on loopback.

Push goes through each CLI's own transaction (EOS configure session, OS10 `start
transaction`): the switch's diff is read before the commit, a failure before the commit
discards the transaction (the running config never changes), a wrong result after it is
restored (EOS: `configure replace checkpoint:`; OS10: inverse commands in a new
transaction). The emulators follow docs/platforms/arista-eos.md and dell-os10.md.
"""

from __future__ import annotations

import json
from pathlib import Path
import re

import pytest

from vlanroute.drivers import FAMILIES
from vlanroute.lab import Faults
from vlanroute.model.platforms import PLATFORMS

from push_support import build_cluster, correct_tables, run, set_ssh_env

pytestmark = pytest.mark.timeout(300)

FIXTURES = Path(__file__).parent / "fixtures"
KINDS = {
    "arista": ("seed-torus-arista.yaml", PLATFORMS["arista-7050sx-64"], FAMILIES["arista-eos"],
               (FIXTURES / "arista-eos-production.cfg").read_text()),
    "os10": ("seed-torus-os10.yaml", PLATFORMS["dell-s5248f-on"], FAMILIES["dell-os10"],
             (FIXTURES / "dell-os10-production.cfg").read_text()),
}
# What each transaction looks like on the wire.
OPEN = {"arista": re.compile(r"configure session vlanroute-\S+"), "os10": re.compile(r"start transaction")}
COMMIT = {"arista": "commit", "os10": "do commit"}
STP_OFF = {"arista": "spanning-tree bpdufilter enable", "os10": "spanning-tree disable"}


def push(capsys, cluster, *extra: str):  # type: ignore[no-untyped-def]
    return run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), *extra)


def canonical(kind: str, name: str, text: str) -> list[str]:
    _, platform, family, _ = KINDS[kind]
    cfg = family.parse_running(text, switch=name, platform=platform)
    return [line.text for line in family.canonical_lines(cfg)]


def no_pending(kind: str, sw) -> bool:  # type: ignore[no-untyped-def]
    """No configure session left pending (EOS), no candidate nor lock left (OS10)."""
    if kind == "arista":
        return not sw.eos.sessions and not sw.eos.checkpoints
    return sw.eos.candidate is None and sw.eos.locked_by is None


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_push_seed_torus_in_one_transaction_per_switch(kind, farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    inventory, platform, family, _ = KINDS[kind]
    cluster = build_cluster(farm, tmp_path, inventory, platform=platform)

    rc, out, err = push(capsys, cluster, "--dry-run", "--workers", "8")
    assert rc == 0 and out.count("dry-run") == 8, out + err
    assert all(sw.config_commands == 0 for sw in farm.switches.values())

    rc, out, err = push(capsys, cluster, "--yes", "--workers", "8")
    assert rc == 0 and len(re.findall(r"│ applied +│", out)) == 8, out + err
    for name in cluster.plan["switches"]:
        sw = cluster.switch(name)
        rendered = (cluster.outdir / "switches" / f"{name}.cfg").read_text()
        running = sw.running_config()
        assert canonical(kind, name, running) == [
            line.text for line in family.canonical_lines(family.parse(rendered, switch=name, platform=platform))]
        assert sw.saved == [running]
        wire = sw.received
        opened = [i for i, c in enumerate(wire) if OPEN[kind].fullmatch(c)]
        committed = [i for i, c in enumerate(wire) if c == COMMIT[kind]]
        assert len(opened) == 1 and len(committed) == 1, wire
        # Every configuration line went into the transaction; the switch's diff was read
        # inside it, before the commit; the save came after it.
        body = wire[opened[0] + 1:committed[0]]
        assert STP_OFF[kind] in body and "mac address-table aging-time 1000000" in body
        assert any("show" in c and "diff" in c for c in body)
        assert wire.index("write memory") > committed[0]
        if kind == "os10":
            assert wire[opened[0] - 1] == "lock" and "unlock" in wire[committed[0]:]
        else:
            assert any(c.startswith("configure checkpoint save") for c in wire[:opened[0]])
        assert no_pending(kind, sw)

    # Nothing to change now: dry run and push both report unchanged and send nothing.
    before = {n: len(cluster.switch(n).received) for n in cluster.plan["switches"]}
    rc, out, err = push(capsys, cluster, "--yes", "--workers", "8")
    assert rc == 0 and out.count("unchanged") == 8, out + err
    for name in cluster.plan["switches"]:
        sent = cluster.switch(name).received[before[name]:]
        assert not any(OPEN[kind].fullmatch(c) for c in sent) and len(cluster.switch(name).saved) == 1


@pytest.mark.parametrize("save", [True, False], ids=["save", "no-save"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_dry_run_lists_every_line_the_push_then_sends(kind, save, farm, tmp_path, monkeypatch, capsys):
    """`push --dry-run --show-commands` lists the transaction's wrappers too (EOS checkpoint,
    configure session, commit, checkpoint deleted; OS10 lock, start transaction, do commit,
    unlock), the switch's diff, the read-back and the save (issue 41, item 12): the push then
    sends exactly those lines, in that order, the transaction's name filled in."""
    from vlanroute.device.transaction import PREVIEW_NAME
    set_ssh_env(monkeypatch)
    inventory, platform, _, _ = KINDS[kind]
    cluster = build_cluster(farm, tmp_path, inventory, platform=platform)
    no_save = [] if save else ["--no-save"]
    rc, out, err = push(capsys, cluster, "--dry-run", "--json", "--show-commands", "--switch", "sw1", *no_save)
    assert rc == 0, out + err
    [record] = json.loads(out)["switches"]
    listed = record["commands"]
    if kind == "os10":
        assert listed[:3] == ["lock", "start transaction", "configure terminal"]
        assert ["do commit", "end", "unlock"] == listed[listed.index("do commit"):listed.index("do commit") + 3]
    else:
        assert listed[:2] == [f"configure checkpoint save {PREVIEW_NAME}", f"configure session {PREVIEW_NAME}"]
        assert "commit" in listed and listed[-1] == f"delete checkpoint:{PREVIEW_NAME}"
    assert ("write memory" in listed) == save
    assert listed.count("show running-config") == 1        # the read-back after the commit

    rc, out, err = push(capsys, cluster, "--yes", "--switch", "sw1", *no_save)
    assert rc == 0, out + err
    wire = cluster.switch("sw1").received
    name = next((m.group(0) for c in wire if (m := re.search(r"vlanroute-\d{8}-\d{6}-\d{6}", c))), PREVIEW_NAME)
    expected = [c.replace(PREVIEW_NAME, name) for c in listed]
    n = len(expected)
    assert any(wire[i:i + n] == expected for i in range(len(wire) - n + 1)), (expected, wire)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_push_to_a_production_switch_changes_only_what_vlanroute_owns(kind, farm, tmp_path, monkeypatch,
                                                                       capsys):
    set_ssh_env(monkeypatch)
    inventory, platform, family, seed = KINDS[kind]
    cluster = build_cluster(farm, tmp_path, inventory, platform=platform, seeds={"sw1": seed})
    sw1 = cluster.switch("sw1")
    before = sw1.running_config()
    rc, out, err = push(capsys, cluster, "--yes", "--switch", "sw1")
    assert rc == 0 and "applied" in out, out + err
    after = sw1.running_config()
    # Every line of the site's running config that is not on a port of the plan is still there.
    managed = set(cluster.plan["switches"]["sw1"]["ports"])
    header = ""
    kept: list[tuple[str, str]] = []
    for raw in before.splitlines():
        if not raw.startswith(" ") and raw.strip() and not raw.startswith("!"):
            header = raw.strip()
        name = header.split()[-1] if header.startswith("interface ") else ""
        if raw.strip() and not raw.startswith("!") and name not in managed \
                and not header.startswith(("vlan ", "mac address-table", "interface Port-Channel",
                                           "interface port-channel", "interface vlan")):
            kept.append((header, raw.strip()))
    after_lines = {l.strip() for l in after.splitlines()}
    missing = [k for k in kept if k[1] not in after_lines]
    assert not missing, missing
    assert "Authorised use only. This switch belongs to the cluster example site." in after or kind == "os10"
    # The site's LAG and VLANs are untouched.
    cfg = family.parse_running(after, switch="sw1", platform=platform)
    assert cfg.lags[10].tagged == ({10, 20, 30} if kind == "arista" else {10, 20})
    assert {10, 20} <= cfg.vlans


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_rejected_command_discards_the_transaction(kind, farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    inventory, platform, _, seed = KINDS[kind]
    cluster = build_cluster(farm, tmp_path, inventory, platform=platform, seeds={"sw1": seed},
                            faults={"sw1": Faults(reject=r"^" + STP_OFF[kind] + r"$")})
    sw1 = cluster.switch("sw1")
    before = sw1.running_config()
    rc, out, err = push(capsys, cluster, "--yes", "--switch", "sw1")
    text = " ".join(out.split())
    assert rc != 0 and "rolled-back" in text and "discarded" in text, out + err
    assert sw1.running_config() == before and not sw1.saved
    assert no_pending(kind, sw1)
    # Nothing was committed: the discard came after the rejected line, no commit at all.
    assert COMMIT[kind] not in sw1.received
    assert ("abort" if kind == "arista" else "discard") in sw1.received


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_lost_session_before_the_commit_leaves_the_switch_unchanged(kind, farm, tmp_path, monkeypatch,
                                                                      capsys):
    set_ssh_env(monkeypatch)
    inventory, platform, _, _ = KINDS[kind]
    cluster = build_cluster(farm, tmp_path, inventory, platform=platform,
                            faults={"sw1": Faults(drop_after=40)})
    sw1 = cluster.switch("sw1")
    before = sw1.running_config()
    rc, out, err = push(capsys, cluster, "--yes", "--switch", "sw1")
    assert rc != 0 and "rolled-back" in out, out + err
    assert sw1.running_config() == before and not sw1.saved
    assert no_pending(kind, sw1)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_wrong_result_after_the_commit_is_rolled_back(kind, farm, tmp_path, monkeypatch, capsys):
    """The switch accepts a line without acting on it: the read-back after the commit
    differs from the prediction, so the switch goes back to where it was, not saved."""
    set_ssh_env(monkeypatch)
    inventory, platform, _, seed = KINDS[kind]
    cluster = build_cluster(farm, tmp_path, inventory, platform=platform, seeds={"sw1": seed},
                            faults={"sw1": Faults(ignore=r"mac address-table aging-time \d+")})
    sw1 = cluster.switch("sw1")
    before = sw1.running_config()
    rc, out, err = push(capsys, cluster, "--yes", "--switch", "sw1")
    text = " ".join(out.split())
    assert rc != 0 and "rolled-back" in text and "differs from the prediction" in text, out + err
    assert canonical(kind, "sw1", sw1.running_config()) == canonical(kind, "sw1", before)
    assert not sw1.saved and no_pending(kind, sw1)
    if kind == "arista":
        assert any(c.startswith("configure replace checkpoint:vlanroute-") for c in sw1.received)
        assert sw1.running_config() == before           # the checkpoint is the exact text
    else:
        # The inverse commands, committed in two transactions: the VLANs are deleted in the
        # second, after the trunks let go of them, since deleting them in the candidate that
        # takes them off the trunks is OS10's "Range configuration conflict" [UG].
        assert sw1.received.count("start transaction") == 3
        last = len(sw1.received) - 1 - sw1.received[::-1].index("start transaction")
        undo = sw1.received[last:]
        assert undo[3].startswith("no interface vlan") and all(
            c.startswith("no interface vlan") for c in undo[3:undo.index("do commit")])


def test_an_os10_undo_refused_after_the_commit_is_discarded(farm, tmp_path, monkeypatch, capsys):
    """Issue 41, item 9. After a commit whose read-back differs, the inverse commands go into
    a new transaction; when the switch refuses one of them, the half-typed undo must be
    discarded: OS10's transaction sessions share one candidate config, which anyone's next
    commit, or any change outside a transaction, commits whole [UG]. Here the emulated OS10
    ignores the aging time (the read-back differs) and refuses the second VLAN deletion,
    after it has taken the first into the candidate."""
    set_ssh_env(monkeypatch)
    inventory, platform, family, seed = KINDS["os10"]
    cluster = build_cluster(farm, tmp_path, inventory, platform=platform, seeds={"sw1": seed},
                            faults={"sw1": Faults(ignore=r"mac address-table aging-time \d+",
                                                  reject=r"^no interface vlan102$")})
    sw1 = cluster.switch("sw1")
    rc, out, err = push(capsys, cluster, "--yes", "--switch", "sw1")
    text = " ".join(out.split())
    assert rc != 0 and "ROLLBACK-FAILED" in text and "discarded" in text, out + err
    # Nothing of the refused transaction is pending: no candidate, no lock; its discard came
    # after the refusal, and VLAN 101, deleted in that candidate, is still on the switch.
    assert no_pending("os10", sw1)
    last = len(sw1.received) - 1 - sw1.received[::-1].index("start transaction")
    assert "no interface vlan102" in sw1.received[last:] and "discard" in sw1.received[last:]
    assert 101 in family.parse_running(sw1.running_config(), switch="sw1", platform=platform).vlans
    assert not sw1.saved


def test_the_emulated_os10_shares_one_candidate_as_the_user_guide_says():
    """[UG] "CLI Basics": every transaction session edits the same candidate, which outlives
    a session ended without a commit; a change made outside a transaction commits it whole;
    `lock` stops changes in every other session until the locking session ends."""
    from vlanroute.lab.os10 import LOCKED, Os10Interpreter, Os10State, Os10SwitchData
    data = Os10SwitchData(Os10State.factory_default(tuple(PLATFORMS["dell-s5248f-on"].ports)), [])
    first = Os10Interpreter("sw1", data)
    for line in ("start transaction", "configure terminal", "interface vlan200", "exit"):
        first.execute(line)
    first.on_close()                                   # ended without a commit
    assert data.candidate is not None and 200 not in data.state.vlans
    other = Os10Interpreter("sw1", data)
    for line in ("configure terminal", "interface vlan300", "exit"):
        other.execute(line)                            # outside a transaction
    assert {200, 300} <= set(data.state.vlans) and data.candidate is None
    holder, blocked = Os10Interpreter("sw1", data), Os10Interpreter("sw1", data)
    holder.execute("lock")
    blocked.execute("configure terminal")
    assert blocked.execute("interface vlan400").output.strip() == LOCKED and 400 not in data.state.vlans
    holder.on_close()
    assert blocked.execute("interface vlan400").output == "" and 400 in data.state.vlans


@pytest.mark.parametrize("then", ["save", "rollback"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_no_save_commits_but_leaves_the_startup_config_to_save_or_rollback(kind, then, farm, tmp_path,
                                                                           monkeypatch, capsys):
    """`push --no-save` as on the 62xx path (docs/push.md, two-step commit): the transaction
    is committed and verified but the startup config is not written; `vlanroute save` then
    writes it, or `vlanroute rollback` restores the running config and leaves it alone."""
    set_ssh_env(monkeypatch)
    inventory, platform, _, seed = KINDS[kind]
    cluster = build_cluster(farm, tmp_path, inventory, platform=platform, seeds={"sw1": seed})
    sw1 = cluster.switch("sw1")
    before = sw1.running_config()
    rc, out, err = push(capsys, cluster, "--yes", "--no-save", "--switch", "sw1")
    assert rc == 0 and "applied-unsaved" in out, out + err
    assert COMMIT[kind] in sw1.received and "write memory" not in sw1.received
    assert not sw1.saved and no_pending(kind, sw1)
    pushed = sw1.running_config()
    assert canonical(kind, "sw1", pushed) != canonical(kind, "sw1", before)

    rc, out, err = run(capsys, then, str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
                       *(["--yes"] if then == "rollback" else []))
    assert rc == 0, out + err
    if then == "save":
        assert sw1.saved == [pushed] and sw1.running_config() == pushed
    else:
        assert canonical(kind, "sw1", sw1.running_config()) == canonical(kind, "sw1", before)
        assert not sw1.saved and no_pending(kind, sw1)
        # Host ports went back to access ports without the trunk lines the push gave them
        # (EOS keeps a trunk's native VLAN and allowed list on an access port and prints them).
        left = [line.strip() for line in sw1.running_config().splitlines()
                if line.strip().startswith("switchport trunk") and line.strip() not in before]
        assert not left, left


AUDIT_INVENTORY = """
name: audit-ring
platform: {platform}
topology: {{kind: ring, size: 3, links_per_pair: 2}}
hosts:
  list:
    - {{name: n1, switch: sw1, mac: "02:00:00:00:00:01"}}
    - {{name: n2, switch: sw2, mac: "02:00:00:00:00:02"}}
    - {{name: n3, switch: sw3, mac: "02:00:00:00:00:03"}}
routing: {{algorithm: shortest}}
switches: {{sw1: {{}}, sw2: {{}}, sw3: {{}}}}
"""


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_audit_reads_the_learned_mac_table(kind, farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    _, platform, family, _ = KINDS[kind]
    inventory = tmp_path / "audit.yaml"
    inventory.write_text(AUDIT_INVENTORY.format(platform=platform.name))
    cluster = build_cluster(farm, tmp_path, str(inventory), platform=platform)
    tables = correct_tables(cluster.plan)        # LAGs spelled chN: the 62xx's spelling
    spell = {"arista": "Port-Channel{}", "os10": "port-channel{}"}[kind]
    skipped = ("sw3", *tables["sw3"][0][:2])
    total = 0
    for name, entries in tables.items():
        for vlan, mac, port in entries:
            total += 1
            if (name, vlan, mac) == skipped:
                continue                                  # never learned
            lag = re.fullmatch(r"ch(\d+)", port)
            farm.switches[name].seed_mac(vlan, mac, spell.format(lag.group(1)) if lag else port)
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "-v")
    assert rc == 1, out + err
    rows = [l for l in out.splitlines() if "02:00:00:00:00:0" in l]
    assert len(rows) == 1 and "sw3" in rows[0] and "missing" in rows[0], out
    assert f"{total - 1} of {total} expected MAC entries" in out


READ_BACK_CASES = {
    # A 7060CX2 prints both lines as typed [CSM].
    "printed": Faults(),
    # A model taking `flowcontrol send on` as its default: in effect, printed only by
    # `show running-config all`, which prints every port's flow control [PYEAPI].
    "flow-default": Faults(unprinted=r"flowcontrol send on"),
    # A model that takes the line without acting on it: `show running-config all` then
    # prints `no flowcontrol send` on the port.
    "flow-not-in-effect": Faults(ignore=r"flowcontrol send on"),
    # A model taking the LAG hash as its default: printed nowhere.
    "hash-default": Faults(unprinted=r"port-channel load-balance trident fields ip .*"),
}


@pytest.mark.parametrize("case", sorted(READ_BACK_CASES))
def test_eos_read_back_of_lines_a_model_may_not_print(case, farm, tmp_path, monkeypatch, capsys):
    """Issue 41, item 11: the LAG hash line and `flowcontrol send on` are seen printed on a
    7060CX2 only. Absent from the read-back, `flowcontrol send on` is looked up in `show
    running-config all` (the model's default if printed there, else not in effect: rolled
    back); the LAG hash, which only picks a LAG member, is taken as the model's default and
    said in the result (docs/platforms/arista-eos.md, "Read-back")."""
    set_ssh_env(monkeypatch)
    inventory, platform, family, _ = KINDS["arista"]
    cluster = build_cluster(farm, tmp_path, inventory, platform=platform, faults={"sw1": READ_BACK_CASES[case]})
    sw1 = cluster.switch("sw1")
    rc, out, err = push(capsys, cluster, "--yes", "--json", "--switch", "sw1")
    [record] = json.loads(out)["switches"]
    message = record["message"]
    printed = sw1.running_config()
    asked_all = "show running-config all" in sw1.received
    if case == "printed":
        assert rc == 0 and record["result"] == "applied" and "note" not in message, message
        assert "   flowcontrol send on" in printed and not asked_all
    elif case == "flow-default":
        assert rc == 0 and record["result"] == "applied", message
        assert "`interface Ethernet1: flowcontrol send on` is printed by `show running-config all` only" in message
        assert "flowcontrol send on" not in printed and "flowcontrol receive on" in printed and asked_all
        assert sw1.saved
    elif case == "flow-not-in-effect":
        assert rc != 0 and record["result"] == "rolled-back", message
        assert "flowcontrol send on (nor in `show running-config all`: not in effect" in message
        assert not sw1.saved and no_pending("arista", sw1)
    else:
        assert rc == 0 and record["result"] == "applied", message
        assert "port-channel load-balance trident fields ip" in message and "this model's default" in message
        assert "load-balance" not in printed and not asked_all
