"""The outage bench in the emulation VM (vlanroute/emulate/outagerun.py, bench/outage.py):
the seed torus with 2 hosts per switch, 2 cables per pair as bonds, backup VLANs planned
(routing.protection: links), sw1-sw2 cut under probe traffic, then once healed sw3 dead
(every cable of it), on vlanroute's plan healed through the watcher's hook as
the linux-bridge family does it (emulate/failoverheal.py: the dead pair found by rtnetlink,
the PVIDs moved onto the backups, then the balanced repair from the failed-over state and
learning frames, each line by rtnetlink; the dead switch found the same way and failed over
from that repair the same way, its own hosts aside), on Open vSwitch's RSTP and on the kernel's 802.1D
(the fastest timers the standard allows, to keep the test short), the same cables and
hosts. Every probed pair each failure interrupts comes back within the timeout, each outage
positive and finite, no storm, no duplicate, no loss after the heal (the repair that
follows the failover included), and each spanning tree blocks the cables the model
(vlanroute.perf.stp) blocks, before the cuts and after each."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from emulate_support import render

from vlanroute.cli import main
from vlanroute.emulate import vm
from vlanroute.emulate.failoverheal import stage_context
from vlanroute.emulate.failplan import Failure
from vlanroute.emulate.outagerun import ProbeSettings, prepare, run_in_vm
from vlanroute.emulate.spanning import ovs_missing
from vlanroute.emulate.spec import load

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "inventories" / "seed-torus.yaml"


@pytest.mark.vm
@pytest.mark.timeout(600)
def test_a_healed_plan_rstp_and_8021d_restore_every_cut_pair(tmp_path: Path) -> None:
    if vm.missing_tools() or ovs_missing():
        pytest.skip("emulation tools missing: " + ", ".join(vm.missing_tools() + ovs_missing()))
    out = render(SEED, tmp_path / "torus", "hosts.count=null", "hosts.per_switch=2", "platform=linux-bridge",
                 "routing.protection=links")
    assert main(["repair", str(out), "--failed-pair", "sw1:sw2", "-o", str(tmp_path / "repaired"), "-q"]) == 0
    assert main(["repair", str(tmp_path / "repaired"), "--failed-switch", "sw3", "-o", str(tmp_path / "then"),
                 "-q"]) == 0
    spec = load(out)
    failures = [Failure(pair=("sw1", "sw2")), Failure(switch="sw3")]
    # 8 host pairs both ways at 20 ms: about what RSTP's userspace datapath forwards under
    # TCG on a busy machine without losing probes before the cut (docs/emulate.md).
    settings = ProbeSettings(interval_s=0.02, warmup_s=2.0, timeout_s=45.0)
    setup = prepare(spec, failures, ["vlanroute", "rstp", "stp"], settings, max_pairs=16, stp_timers="fastest",
                    heal="vlanroute.emulate.failoverheal:apply_failover", running=[spec, load(tmp_path / "repaired")])
    setup.stages[0].heal_context = stage_context(out, failures[0], tmp_path / "repaired", out)
    setup.stages[1].heal_context = stage_context(tmp_path / "repaired", failures[1], tmp_path / "then", out)
    for stage in setup.stages:
        assert len(stage.pairs) == 16 and all((b, a) in stage.pairs for a, b in stage.pairs)
    # 802.1D once: its second stage would add half a minute to the suite and test nothing new.
    setup.stages[1].methods = ["vlanroute", "rstp"]
    assert setup.heal_context["table"]["sw1:sw2"] and setup.heal_context["repair"]["trees"]
    assert setup.stages[1].heal_context["table"]["sw3"] and setup.stages[1].heal_context["repair"]["trees"]
    lines: list[str] = []
    report = run_in_vm(out, setup, 540, lines.append)
    text = report.text()
    assert report.ok, text + "\n" + "\n".join(lines[-40:])
    assert [(s.method, s.failure) for s in report.summaries] == [
        ("vlanroute", "fail sw1-sw2"), ("rstp", "fail sw1-sw2"), ("stp", "fail sw1-sw2"),
        ("vlanroute", "stop sw3"), ("rstp", "stop sw3")], text
    for s in report.summaries:
        assert s.interrupted > 0 and s.never_restored == 0, text
        assert s.duplicates == 0 and s.not_delivering_at_end == 0, text
        for o in report.outages[s.method if s.stage == 0 else f"{s.method}:2"]:
            if o.interrupted:
                assert o.outage_s is not None and 0 < o.outage_s < settings.timeout_s, (o, text)
                assert math.isfinite(o.outage_s)
    run = {r.method: r for r in report.runs}
    vlanroute = run["vlanroute"].measurement
    assert vlanroute is not None and vlanroute.heal_s is not None, text     # the hook ran, and returned
    # It found the pair itself, moved PVIDs only, then repaired; nothing was lost after that.
    heal = [line for line in lines if "[heal]" in line]
    assert any("failover: sw1:sw2 found dead" in line for line in heal), "\n".join(lines[-40:])
    assert any("repair after the failover" in line for line in heal), "\n".join(lines[-40:])
    assert any("failover: sw3 found dead" in line for line in heal), "\n".join(lines[-40:])
    assert report.summaries[0].later_lost == 0 and report.summaries[3].later_lost == 0, text
    for method in ("rstp", "stp"):
        names = [c.name for c in run[method].checks if c.ok]
        assert "spanning tree before the cut" in names, text
        assert any(n.startswith("spanning tree after the cut") for n in names), text
        assert any(n.startswith("no storm after the cut") for n in names), text
    # 802.1D with its timers: the new root port listens and learns (2 x 4 s) after max age (6 s)
    # at most; RSTP has no such timer on point-to-point links.
    _healed, rstp, stp = report.summaries[:3]
    assert stp.median_s is not None and stp.median_s > 4.0, text
    assert rstp.median_s is not None and rstp.median_s < stp.median_s, text
