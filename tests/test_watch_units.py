"""The watcher's parts, without switches (vlanroute/operate/): the debounce, the policy in the
inventory and plan.json, failures from port states, the syslog hints of the formats public
captures show, the notify hook, the journal, the systemd unit."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from vlanroute.bundle.failures import Failures
from vlanroute.cli import main
from vlanroute.model.inventory import load_inventory
from vlanroute.operate.debounce import Debouncer
from vlanroute.operate.fabricview import classify
from vlanroute.operate.journal import WatchJournal, history
from vlanroute.operate.notify import Notifier
from vlanroute.operate.policy import WatchPolicy
from vlanroute.operate.syslog import SyslogListener, parse
from vlanroute.operate.unit import unit_text
from vlanroute.plan.build import plan_from_file

REPO = Path(__file__).resolve().parent.parent
INVENTORIES = REPO / "inventories"

# -- debounce -------------------------------------------------------------------------------


def test_a_port_counts_as_down_after_n_polls_and_t_seconds() -> None:
    d = Debouncer(polls=3, down_s=2.0, hold_down_s=10.0)
    k = ("sw1", "1/g47")
    assert d.observe(k, True, 0.0) is None and d.state(k)
    assert d.observe(k, False, 1.0) is None          # 1 poll
    assert d.observe(k, False, 2.0) is None          # 2 polls, 1 s
    assert d.observe(k, False, 2.5) is None          # 3 polls, 1.5 s: not long enough
    change = d.observe(k, False, 3.0)                # 4 polls, 2 s
    assert change is not None and change.up is False and change.after_s == 2.0 and not d.state(k)


def test_seconds_alone_are_not_enough_either() -> None:
    d = Debouncer(polls=3, down_s=1.0, hold_down_s=0.0)
    k = ("sw1", "p")
    assert d.observe(k, False, 0.0) is None
    assert d.observe(k, False, 50.0) is None         # 2 polls only, however long
    assert d.observe(k, False, 51.0) is not None


def test_one_up_reading_restarts_the_count_and_is_a_flap() -> None:
    d = Debouncer(polls=2, down_s=1.0, hold_down_s=5.0)
    k = ("sw1", "p")
    d.observe(k, False, 0.0)
    d.observe(k, True, 0.5)                          # back: the run of downs ends
    assert d.observe(k, False, 1.0) is None          # counts from 1.0 again
    assert d.observe(k, False, 1.5) is None
    assert d.observe(k, False, 2.0) is not None      # 3 polls since 1.0, 1 s
    assert len(d.keys[k].flaps) == 1


def test_a_returned_port_needs_the_hold_down_and_a_down_restarts_it() -> None:
    d = Debouncer(polls=2, down_s=0.0, hold_down_s=10.0)
    k = ("sw1", "p")
    d.assume([k], up=False)
    assert d.observe(k, True, 0.0) is None
    assert d.observe(k, True, 9.9) is None
    assert d.observe(k, False, 10.0) is None         # down again: the hold-down starts over
    assert d.observe(k, True, 11.0) is None
    assert d.observe(k, True, 20.9) is None
    change = d.observe(k, True, 21.0)
    assert change is not None and change.up and change.after_s == 10.0


def test_an_unread_round_neither_advances_nor_resets() -> None:
    d = Debouncer(polls=3, down_s=0.0, hold_down_s=0.0)
    k = ("sw1", "p")
    d.observe(k, False, 0.0)
    d.observe(k, None, 1.0)
    d.observe(k, None, 2.0)
    assert d.state(k) and d.pending(k)
    d.observe(k, False, 3.0)
    assert d.observe(k, False, 4.0) is not None


def test_flapping_is_reported_once() -> None:
    d = Debouncer(polls=2, down_s=5.0, hold_down_s=5.0)
    k = ("sw1", "p")
    t = 0.0
    reported = []
    for _ in range(6):
        d.observe(k, False, t)
        d.observe(k, True, t + 1)
        reported += d.flapping(t + 1)
        t += 2
    assert reported == [k] and d.state(k)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 3.0), st.booleans()), min_size=1, max_size=60),
       st.integers(1, 4), st.floats(0.0, 5.0))
def test_no_run_shorter_than_the_debounce_ever_counts(steps, polls, down_s) -> None:
    """Property: a port counts as down only after a run of down readings that lasted at
    least `down_s` and `polls` readings, with no up reading inside it (checked against a
    plain reading of the observation list)."""
    d = Debouncer(polls=polls, down_s=down_s, hold_down_s=1e9)
    k = ("a", "b")
    t = 0.0
    seen: list[tuple[float, bool]] = []
    for gap, up in steps:
        t += gap
        seen.append((t, up))
        change = d.observe(k, up, t)
        if change is not None:
            assert change.up is False
            run = []
            for at, u in reversed(seen):
                if u:
                    break
                run.append(at)
            assert len(run) >= polls and run[0] - run[-1] >= down_s
            return


# -- the policy -------------------------------------------------------------------------------


def _inventory(tmp_path: Path, watch: str) -> Path:
    path = tmp_path / "inv.yaml"
    path.write_text("name: w\ntopology: {kind: ring, size: 4}\nhosts: {per_switch: 2}\n"
                    f"operation:\n  watch: {watch}\n")
    return path


def test_the_policy_travels_from_the_inventory_to_plan_json(tmp_path: Path) -> None:
    inv = _inventory(tmp_path, "{policy: auto, heal: [pair], interval_s: 2, hold_down_s: 60, "
                               "notify: '/usr/local/bin/page --fabric w', syslog_listen: '127.0.0.1:5514'}")
    doc = plan_from_file(inv).to_document()
    data = doc.to_json()
    assert data["operation"]["watch"] == {
        "policy": "auto", "heal": ["pair"], "strategies": ["failover", "repair"], "interval_s": 2.0, "debounce_polls": 2,
        "debounce_s": 5.0, "hold_down_s": 60.0, "notify": "/usr/local/bin/page --fabric w",
        "syslog_listen": "127.0.0.1:5514", "audit": True, "retries": 3, "retry_s": 60.0}
    policy = WatchPolicy.of(doc)
    assert policy.policy == "auto" and policy.heal == {"pair"} and policy.interval_s == 2.0
    # The command line overrides one field, the rest stays.
    policy = WatchPolicy.of(doc, {"policy": "propose", "interval_s": None})
    assert policy.policy == "propose" and policy.interval_s == 2.0
    # A plan without the section: no key in plan.json, the defaults (propose).
    plain = plan_from_file(INVENTORIES / "seed-ring.yaml").to_document()
    assert "operation" not in plain.to_json() and WatchPolicy.of(plain).policy == "propose"


@pytest.mark.parametrize(("watch", "field", "why"), [
    ("{policy: always}", "operation.watch.policy", "'auto' or 'propose'"),
    ("{heal: [cable]}", "operation.watch.heal.0", "'pair' or 'switch'"),
    ("{interval_s: 0}", "operation.watch.interval_s", "greater than or equal to 0.2"),
    ("{interval_s: '5'}", "operation.watch.interval_s", "valid number"),
    ("{debounce_polls: 0}", "operation.watch.debounce_polls", "greater than or equal to 1"),
    ("{notify: 'notify-send x'}", "operation.watch.notify", "absolute path"),
    ("{notify: \"/bin/x 'a\"}", "operation.watch.notify", "cannot be split"),
    ("{syslog_listen: 'host:x'}", "operation.watch.syslog_listen", "not ADDRESS:PORT"),
    ("{syslog_listen: '127.0.0.1:70000'}", "operation.watch.syslog_listen", "not 1-65535"),
    ("{strategies: []}", "operation.watch.strategies", "at least 1"),
    ("{pollicy: auto}", "operation.watch.pollicy", "unknown key"),
])
def test_a_wrong_policy_names_the_file_and_the_field(tmp_path: Path, capsys, watch: str, field: str,
                                                     why: str) -> None:
    inv = _inventory(tmp_path, watch)
    assert main(["plan", str(inv)]) == 2
    err = capsys.readouterr().err
    assert f"{inv}: {field}: " in err and why in err and "Traceback" not in err


def test_a_wrong_override_names_the_option(tmp_path: Path) -> None:
    doc = plan_from_file(INVENTORIES / "seed-ring.yaml").to_document()
    from vlanroute.errors import UserError
    with pytest.raises(UserError) as exc:
        WatchPolicy.of(doc, {"interval_s": 0.0}, {"interval_s": "--interval"})
    assert exc.value.message.startswith("--interval: ") and "0.2" in exc.value.message


def test_plan_json_refuses_a_notify_hook_edited_in(tmp_path: Path, capsys) -> None:
    inv = _inventory(tmp_path, "{policy: auto, notify: /bin/true}")
    out = tmp_path / "out"
    assert main(["render", str(inv), "-o", str(out), "-q"]) == 0
    data = json.loads((out / "plan.json").read_text())
    data["operation"]["watch"]["notify"] = "rm -rf /"
    (out / "plan.json").write_text(json.dumps(data))
    assert main(["watch", str(out), "--once", "--state-dir", str(tmp_path / "state")]) == 2
    err = capsys.readouterr().err
    assert "operation.watch.notify" in err and "absolute path" in err
    assert not (tmp_path / "state").exists()


def test_inventory_spec_defaults_are_propose(tmp_path: Path) -> None:
    inv = _inventory(tmp_path, "{}")
    spec = load_inventory(inv).spec.operation.watch
    assert spec is not None and spec.policy == "propose" and spec.heal == ["pair", "switch"]


# -- failures from port states -----------------------------------------------------------------


@pytest.fixture(scope="module")
def torus():  # type: ignore[no-untyped-def]
    return plan_from_file(INVENTORIES / "seed-torus.yaml").to_document()


def _ends(doc, *pairs: tuple[str, str]) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    out = set()
    for c in doc.cabling:
        if {c.a, c.b} in [set(p) for p in pairs]:
            out |= {(c.a, c.a_port), (c.b, c.b_port)}
    return out


def test_a_whole_pair_down_is_a_failed_pair_one_cable_is_capacity(torus) -> None:  # type: ignore[no-untyped-def]
    ends = _ends(torus, ("sw1", "sw2"))
    seen = classify(torus, ends, set())
    assert seen.failures == Failures(pairs=(("sw1", "sw2"),)) and seen.classes == {"pair"}
    one = sorted(ends)[0]                       # one end of one cable: that cable is down
    seen = classify(torus, {one}, set())
    assert seen.failures.pairs == () and len(seen.failures.cables) == 1 and seen.classes == set()


def test_every_cable_of_a_switch_down_is_a_failed_switch(torus) -> None:  # type: ignore[no-untyped-def]
    neighbours = {c.b if c.a == "sw3" else c.a for c in torus.cabling if "sw3" in (c.a, c.b)}
    # Seen from the far ends only: sw3 itself is not read (dead).
    far = {e for e in _ends(torus, *[("sw3", n) for n in neighbours]) if e[0] != "sw3"}
    seen = classify(torus, far, {"sw3"})
    assert seen.failures == Failures(switches=("sw3",)) and seen.classes == {"switch"}


def test_no_evidence_is_no_failure(torus) -> None:  # type: ignore[no-untyped-def]
    """Two switches that cannot be read: their cables are unknown, not down."""
    seen = classify(torus, set(), {"sw1", "sw2"})
    assert not seen.failures and len(seen.unknown_cables) == 2


# -- syslog hints -------------------------------------------------------------------------------

# Public captures (docs/watch.md): napalm-logs' EOS INTERFACE_DOWN example (a vEOS), and an
# OS10 10.5.0.2 console on an S4112F-ON. The FASTPATH line was seen on another FASTPATH switch:
# an assumption for the 62xx and OS6.
EOS_DOWN = ("<165>Feb  6 09:42:36 veos01 Ebra: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet28, "
            "changed state to down")
OS10_DOWN = ("<165>1 2019-10-28T19:10:22.616888+00:00 OS10 dn_alm 669 - - Node.1-Unit.1:PRI [event], Dell EMC "
             "(OS10) %IFM_OSTATE_DN: Interface operational state is down :ethernet1/1/12")
OS10_UP = ("<165>1 2019-10-28T19:10:29.591467+00:00 OS10 dn_alm 669 - - Node.1-Unit.1:PRI [event], Dell EMC "
           "(OS10) %IFM_OSTATE_UP: Interface operational state is up :ethernet1/1/12")
FASTPATH_DOWN = "<13> AUG 27 21:16:41 10.100.10.1-1 TRAPMGR[126170688]: traputil.c(636) 1923 %% Link Down: 0/15"


def test_the_published_link_messages_parse() -> None:
    eos = parse(EOS_DOWN)
    assert eos is not None and (eos.family, eos.port, eos.up, eos.host) == ("arista-eos", "Ethernet28", False, "veos01")
    os10 = parse(OS10_DOWN)
    assert os10 is not None and (os10.family, os10.port, os10.up, os10.host) == ("dell-os10", "ethernet1/1/12",
                                                                                 False, "OS10")
    up = parse(OS10_UP)
    assert up is not None and up.up
    fp = parse(FASTPATH_DOWN)
    assert fp is not None and (fp.family, fp.port, fp.up) == ("fastpath", "0/15", False)
    assert parse("<189> %SYS-5-CONFIG_I: Configured from console") is None


def test_a_syslog_datagram_reaches_the_hint_handler() -> None:
    got: list[object] = []
    done = threading.Event()

    def on_hint(h: object) -> None:
        got.append(h)
        done.set()
    listener = SyslogListener("127.0.0.1", 0, on_hint)
    listener.start()
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"\xff\xfe garbage", listener.address)
            s.sendto(EOS_DOWN.encode(), listener.address)
        assert done.wait(5)
    finally:
        listener.stop()
    assert len(got) == 1 and got[0].port == "Ethernet28"  # type: ignore[attr-defined]


# -- the notify hook ----------------------------------------------------------------------------


def test_the_hook_gets_the_event_on_stdin_and_no_password(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VLANROUTE_SSH_PASSWORD", "Pw-must-not-leak")
    out = tmp_path / "got"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\n{{ cat; env | grep '^VLANROUTE_' | sort; }} > {out}\n")
    hook.chmod(0o755)
    logged: list[tuple[str, dict]] = []
    n = Notifier(str(hook), {"VLANROUTE_FABRIC": "f"}, lambda e, **kw: logged.append((e, kw)))
    n({"event": "healed", "x": 1}, bundle="/b")
    n.wait(10)
    text = out.read_text()
    assert json.loads(text.splitlines()[0]) == {"event": "healed", "x": 1}
    assert "VLANROUTE_EVENT=healed" in text and "VLANROUTE_BUNDLE=/b" in text and "VLANROUTE_FABRIC=f" in text
    assert "Pw-must-not-leak" not in text and not logged


def test_a_failing_hook_is_logged_never_fatal(tmp_path: Path) -> None:
    logged: list[tuple[str, dict]] = []
    n = Notifier("/bin/sh -c 'echo broken >&2; exit 3'", {}, lambda e, **kw: logged.append((e, kw)))
    n({"event": "proposed"})
    m = Notifier(str(tmp_path / "missing"), {}, lambda e, **kw: logged.append((e, kw)))
    m({"event": "proposed"})
    n.wait(10)
    m.wait(10)
    assert sorted(e for e, _ in logged) == ["notify-failed", "notify-failed"]
    by_code = next(kw for e, kw in logged if "exit_code" in kw)
    assert by_code["exit_code"] == 3 and by_code["stderr"] == "broken"


# -- the journal --------------------------------------------------------------------------------


def test_the_journal_survives_a_torn_last_line_and_gives_the_last_closed_failures(tmp_path: Path) -> None:
    j = WatchJournal(tmp_path / "journal.jsonl")
    j.append("start", pid=1)
    j.append("intent", action="a1", failures={"cables": [], "pairs": ["sw1:sw2"], "switches": []})
    j.append("done", action="a1", outcome="healed", failures={"cables": [], "pairs": ["sw1:sw2"], "switches": []})
    j.append("intent", action="a2", failures={"cables": [], "pairs": [], "switches": []})
    with open(j.path, "a") as fh:
        fh.write('{"time": "x", "event": "pushi')          # cut short by a crash
    h = history(j.records())
    assert h.acted["pairs"] == ["sw1:sw2"] and h.unfinished is not None and h.unfinished.id == "a2"
    assert stat.S_IMODE(os.stat(j.path).st_mode) == 0o600


# -- the systemd unit -----------------------------------------------------------------------------


def test_the_unit_runs_the_watcher_with_credentials_from_a_file(tmp_path: Path, capsys) -> None:
    text = unit_text(plan="seed-torus", outdir=Path("/srv/fabric/out"), state_dir=Path("/var/lib/vlanroute/seed-torus"),
                     env_file=Path("/etc/vlanroute/seed-torus.env"), python=Path("/opt/vr/bin/python"),
                     user="vlanroute")
    assert "ExecStart=/opt/vr/bin/python -m vlanroute.cli watch /srv/fabric/out --state-dir " \
           "/var/lib/vlanroute/seed-torus\n" in text
    assert "EnvironmentFile=/etc/vlanroute/seed-torus.env\n" in text and "User=vlanroute\n" in text
    assert "Restart=on-failure\n" in text and "RestartPreventExitStatus=2\n" in text
    assert "PASSWORD" not in text
    from vlanroute.errors import UserError
    with pytest.raises(UserError):
        unit_text(plan="x", outdir=Path("/srv/my fabric"), state_dir=Path("/s"), env_file=Path("/e"))
    with pytest.raises(UserError):
        unit_text(plan="x", outdir=Path("/srv/a%n"), state_dir=Path("/s"), env_file=Path("/e"))


def test_install_unit_writes_it_once_and_systemd_reads_it_without_complaint(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["render", str(INVENTORIES / "seed-ring.yaml"), "-o", str(out), "-q"]) == 0
    env = tmp_path / "seed-ring.env"
    env.write_text("VLANROUTE_SSH_USER=admin\n")
    units = tmp_path / "units"
    units.mkdir()
    assert main(["watch", str(out), "--install-unit", str(units), "--env-file", str(env),
                 "--state-dir", str(tmp_path / "state")]) == 0
    err = capsys.readouterr().err
    unit = units / "vlanroute-watch-seed-ring.service"
    assert f"wrote {unit}" in err and "systemctl daemon-reload && systemctl enable --now" in err
    # Written again the same: fine; a different one is refused without --force.
    assert main(["watch", str(out), "--install-unit", str(units), "--env-file", str(env),
                 "--state-dir", str(tmp_path / "state")]) == 0
    assert main(["watch", str(out), "--install-unit", str(units), "--state-dir", str(tmp_path / "other")]) == 2
    assert "a different unit file is there already" in capsys.readouterr().err
    assert main(["watch", str(out), "--install-unit", str(units), "--state-dir", str(tmp_path / "other"),
                 "--force"]) == 0
    assert f"--state-dir {tmp_path / 'other'}" in unit.read_text()
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed: the unit was not checked by systemd")
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60,
                          check=False)
    problems = [line for line in (done.stdout + done.stderr).splitlines()
                if str(unit) in line or "vlanroute-watch" in line]
    assert done.returncode == 0 and not problems, done.stdout + done.stderr


# -- the decisions, with scripted link states (no switch, no SSH) ---------------------------------


class ScriptedPoller:
    """Stands in for operate/poller.Poller: a round every 20 ms with the ports in `down` down."""

    down: set[tuple[str, str]] = set()

    def __init__(self, targets, creds, host_keys, interval_s, on_round, fast_s=None) -> None:  # type: ignore[no-untyped-def]
        self.on_round, self.hurry = on_round, False
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stopped.wait(0.02):
            self.on_round(time.monotonic(), {sw: {p: (sw, p) not in self.down for p in ports}
                                             for sw, ports in ENDS.items()})

    def start(self) -> None:
        self.thread.start()

    def poll_now(self) -> None:
        pass

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(5)


ENDS: dict[str, list[str]] = {}


def _scripted(tmp_path: Path, **policy):  # type: ignore[no-untyped-def]
    from vlanroute.bundle.reader import read_plan
    from vlanroute.device.credentials import Credentials
    from vlanroute.device.journal import sha256_text
    from vlanroute.device.statedir import FabricState
    from vlanroute.operate.events import EventLog
    from vlanroute.operate.watcher import Connection, Watcher
    out = tmp_path / "out"
    assert main(["render", str(INVENTORIES / "seed-ring.yaml"), "-o", str(out), "-q"]) == 0
    doc = read_plan(out)
    ENDS.clear()
    for c in doc.cabling:
        ENDS.setdefault(c.a, []).append(c.a_port)
        ENDS.setdefault(c.b, []).append(c.b_port)
    ScriptedPoller.down = set()
    chosen = WatchPolicy.of(doc, {"interval_s": 0.2, "debounce_s": 0.1, "hold_down_s": 0.2, **policy})
    log = EventLog("seed-ring", stream=open(os.devnull, "w"))  # noqa: SIM115 - closed with the test
    w = Watcher(out, doc, sha256_text((out / "plan.json").read_text()), FabricState(tmp_path / "state"), chosen,
                Connection(Credentials("u", "p")), [], log, poller=ScriptedPoller)
    return w, out, doc, log


def test_propose_and_the_way_back_with_scripted_links(tmp_path: Path) -> None:
    w, out, doc, log = _scripted(tmp_path)
    stop = threading.Event()
    thread = threading.Thread(target=w.run, args=(stop,), daemon=True)
    thread.start()
    try:
        c = doc.cabling[0]
        # One end of each cable of the pair down (two cables per pair): first one cable, a
        # loss of capacity only (noted), then both, a dead pair (proposed).
        ends = [(d.a, d.a_port) for d in doc.cabling if {d.a, d.b} == {c.a, c.b}]
        ScriptedPoller.down = {ends[0]}
        deadline = time.monotonic() + 60
        while not [e for e in log.seen if e["event"] == "degraded"] and time.monotonic() < deadline:
            time.sleep(0.05)
        ScriptedPoller.down = set(ends)
        deadline = time.monotonic() + 60
        while not [e for e in log.seen if e["event"] == "proposed"] and time.monotonic() < deadline:
            time.sleep(0.05)
        ScriptedPoller.down = set()
        while len([e for e in log.seen if e["event"] == "proposed"]) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(30)
    proposed = [e for e in log.seen if e["event"] == "proposed"]
    assert [p["kind"] for p in proposed] == ["heal", "return"]
    assert [e["failures"]["cables"] for e in log.seen if e["event"] == "degraded"] == [[f"{ends[0][0]}:{ends[0][1]}"]]
    assert proposed[0]["failures"]["pairs"] == [f"{min(c.a, c.b)}:{max(c.a, c.b)}"]
    assert proposed[1]["bundles"] == [str(out.resolve())]
    assert [a["outcome"] for a in w.summary()["actions"]] == ["noted", "proposed", "proposed"]


def test_a_new_plan_json_stops_the_watcher_for_a_restart(tmp_path: Path) -> None:
    w, out, doc, log = _scripted(tmp_path)
    stop = threading.Event()
    done: list[object] = []
    thread = threading.Thread(target=lambda: done.append(w.run(stop)), daemon=True)
    thread.start()
    time.sleep(0.3)
    (out / "plan.json").write_text((out / "plan.json").read_text().replace('"seed-ring"', '"seed-ring-2"', 1))
    thread.join(30)
    stop.set()
    assert done == [1] and w.plan_changed and [e for e in log.seen if e["event"] == "plan-changed"]


def _push_journal(state: Path, stamp: str, outdir: Path, events: list[dict]) -> Path:  # type: ignore[type-arg]
    (state / "pushes").mkdir(parents=True, exist_ok=True)
    path = state / "pushes" / f"{stamp}.jsonl"
    head = {"journal": "vlanroute-push-journal/1", "event": "push", "time": "t", "push": stamp,
            "outdir": str(outdir.resolve()), "plan": "seed-ring", "save": True, "switches": ["sw1", "sw2"]}
    path.write_text("".join(json.dumps(r) + "\n" for r in [head, *events]))
    return path


APPLYING = {"time": "t", "event": "applying", "switch": "sw1", "backup": "/x", "backup_sha256": "0"}
SAVED = [{"time": "t", "event": "saved", "switch": "sw1"}, {"time": "t", "event": "unchanged", "switch": "sw2"},
         {"time": "t", "event": "end", "interrupted": False}]


@pytest.mark.parametrize(("case", "outcome", "acted"), [
    ("intent only", "abandoned", False),
    ("pushing, no push journal", "abandoned", False),
    ("pushing, the push finished", "healed", True),
    ("pushing, the push unfinished, a later push", "abandoned", False),
    ("pushing, the push unfinished, policy propose", "needs-person", False),
    ("pushed", "healed", True),
])
def test_recovery_of_every_point_a_watcher_can_be_killed_at(tmp_path: Path, case: str, outcome: str,
                                                            acted: bool) -> None:
    w, out, doc, log = _scripted(tmp_path, policy="propose" if "propose" in case else "auto")
    state = tmp_path / "state"
    bundle = state / "watch" / "bundles" / "20261201T000000.000000Z-repair"
    failures = {"cables": [], "pairs": ["sw1:sw2"], "switches": []}
    j = w.journal
    j.append("intent", action="A", mode="auto", kind="heal", failures=failures,
             previous={"cables": [], "pairs": [], "switches": []})
    if case != "intent only":
        j.append("bundle", action="A", strategy="repair", bundle=str(bundle))
        j.append("pushing", action="A", bundle=str(bundle), stamp="20261201T000001.000000Z", resume=None)
    if "finished" in case:
        _push_journal(state, "20261201T000002.000000Z", bundle, [APPLYING, *SAVED])
    if "unfinished" in case:
        _push_journal(state, "20261201T000002.000000Z", bundle, [APPLYING])
    if "later push" in case:
        _push_journal(state, "20261201T000009.000000Z", out, [])
    if case == "pushed":
        j.append("pushed", action="A", bundle=str(bundle), exit_code=0, journal="x")
    w.recover()
    done = [r for r in j.records() if r["event"] == "done"]
    assert [r["outcome"] for r in done] == [outcome], case
    assert (w.acted.pairs == (("sw1", "sw2"),)) is acted
    if outcome == "needs-person":
        event = [e for e in log.seen if e["event"] == "needs-person"][0]
        assert event["commands"][0] == f"vlanroute push {bundle} --resume --state-dir {state}"
    if "later push" in case:
        assert "superseded by a later push" in done[0]["note"]


def test_a_journal_that_cannot_be_written_stops_the_action_and_it_is_tried_again(tmp_path: Path) -> None:
    from vlanroute.operate.journal import WatchJournalError
    w, out, doc, log = _scripted(tmp_path, retry_s=0.3)
    real = w.journal.append
    refused: list[str] = []

    def full_disk(event: str, **fields):  # type: ignore[no-untyped-def]
        if event == "intent" and not refused:
            refused.append(event)
            raise WatchJournalError("cannot write the watch journal: no space left on the device")
        return real(event, **fields)
    w.journal.append = full_disk  # type: ignore[method-assign]
    c = doc.cabling[0]
    ScriptedPoller.down = {(d.a, d.a_port) for d in doc.cabling if {d.a, d.b} == {c.a, c.b}}
    stop = threading.Event()
    thread = threading.Thread(target=w.run, args=(stop,), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not [e for e in log.seen if e["event"] == "proposed"] and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(30)
    events = [e["event"] for e in log.seen]
    assert "journal-failed" in events and events.index("journal-failed") < events.index("proposed")
    assert [r["event"] for r in w.journal.records() if r.get("action")].count("intent") == 1


def test_a_fabric_cut_in_two_is_heal_failed_and_not_tried_again(tmp_path: Path) -> None:
    w, out, doc, log = _scripted(tmp_path, policy="auto")
    cut = [{"sw1", "sw2"}, {"sw5", "sw6"}]                 # two pairs of the ring of 8: two halves
    ScriptedPoller.down = {(d.a, d.a_port) for d in doc.cabling if {d.a, d.b} in cut}
    stop = threading.Event()
    thread = threading.Thread(target=w.run, args=(stop,), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not [e for e in log.seen if e["event"] == "heal-failed"] and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)                                    # more rounds: nothing more is tried
    finally:
        stop.set()
        thread.join(30)
    failed = [e for e in log.seen if e["event"] == "heal-failed"]
    assert len(failed) == 1 and "cut in parts" in failed[0]["error"] and failed[0]["pushed"] == []
    assert not [e for e in log.seen if e["event"] in ("pushed", "healed")] and not w.acted
    assert not list((tmp_path / "state").glob("pushes/*.jsonl"))


def _round(w, now: list[float], at: float, down: set[tuple[str, str]], unread: frozenset[str] = frozenset()) -> None:  # type: ignore[no-untyped-def]
    """One poll round by hand, at `at` on the watcher's clock, then the decision after it."""
    now[0] = at
    w.observe(at, {sw: "read timed out" if sw in unread else {p: (sw, p) not in down for p in ports}
                   for sw, ports in ENDS.items()})
    w.decide()


def _decisions(log) -> list[dict[str, list[str]]]:  # type: ignore[no-untyped-def]
    return [e["failures"] for e in log.seen if e["event"] == "deciding"]


def test_a_dead_switch_whose_far_ends_are_seen_a_round_apart_is_one_decision(tmp_path: Path) -> None:
    """sw3 of the ring dies between the reads of sw2 and sw4 in one round: sw2's ends count a
    round before sw4's. The watcher waits for sw4's (on their way) and decides once, for the
    dead switch, rather than for the pair sw2:sw3 and then again for sw3."""
    w, out, doc, log = _scripted(tmp_path, debounce_polls=2, debounce_s=0.1)
    now = [0.0]
    w.clock = lambda: now[0]
    far = {sw: {(sw, c.a_port if c.a == sw else c.b_port) for c in doc.cabling if {c.a, c.b} == {sw, "sw3"}}
           for sw in ("sw2", "sw4")}
    assert far["sw2"] and far["sw4"]
    dead = frozenset({"sw3"})
    _round(w, now, 0.0, set())
    _round(w, now, 0.2, far["sw2"], dead)             # sw4 was read before sw3 died
    _round(w, now, 0.4, far["sw2"] | far["sw4"], dead)   # sw2's ends count; sw4's on their way
    assert _decisions(log) == []
    _round(w, now, 0.6, far["sw2"] | far["sw4"], dead)
    assert [(d["switches"], d["pairs"]) for d in _decisions(log)] == [(["sw3"], [])]


def test_the_wait_for_ports_on_their_way_down_lasts_no_longer_than_the_detection_bound(tmp_path: Path) -> None:
    """A port seen down once whose switch then stops answering never counts (an unread round
    neither advances nor resets it): the dead pair elsewhere waits for it one detection bound
    at most, then is acted on."""
    w, out, doc, log = _scripted(tmp_path, debounce_polls=2, debounce_s=0.1)
    bound = w.policy.detection_bound_s()
    now = [0.0]
    w.clock = lambda: now[0]
    pair = {(c.a, c.a_port) for c in doc.cabling if {c.a, c.b} == {"sw2", "sw3"}}
    stuck = next((c.a, c.a_port) for c in doc.cabling if c.a == "sw6" and c.b == "sw7")
    _round(w, now, 0.0, set())
    _round(w, now, 0.2, pair | {stuck})
    at = 0.4
    _round(w, now, at, pair, frozenset({"sw6"}))    # the pair counts; sw6 is no longer read
    assert w.current.pairs and _decisions(log) == []
    while not _decisions(log):
        at = round(at + 0.2, 3)
        _round(w, now, at, pair, frozenset({"sw6"}))
        assert at <= 0.4 + bound + 0.2, "the wait outlasted the detection bound"
    assert at >= 0.4 + bound
    assert [(d["switches"], d["pairs"]) for d in _decisions(log)] == [([], ["sw2:sw3"])]
