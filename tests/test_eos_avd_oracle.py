"""Arista's own generator (AVD's eos_cli_config_gen, PyPI `pyavd`) as an independent check of
templates/switch/arista-eos.j2 (issue 42, part 2).

For every switch of three EOS bundles, tests/avd_oracle.py builds AVD's structured
configuration from plan.json alone, has pyavd validate and render it, and compares the text
with vlanroute's block by block. Every difference must be one of the rows of the table on
docs/platforms/arista-eos.md ("Arista's generator as a check"), and every row must occur.
A changed template line must make the comparison fail: the last test renders mutated copies
of the template and checks that each one is reported.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import jinja2
import pytest
import yaml

import avd_oracle as oracle
from vlanroute.bundle.document import PlanDocument
from vlanroute.plan.build import plan_from_file
from vlanroute.render.context import DocIndex, switch_context
from vlanroute.render.write import environment, platforms_of, render_files, render_switch

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "platforms" / "arista-eos.md"
TEMPLATE = "switch/arista-eos.j2"

SEED = ROOT / "inventories" / "seed-torus-arista.yaml"
TORUS_16 = ["topology.dims=[16,16]", "topology.links_per_pair=1", "hosts.count=null", "hosts.per_switch=4"]


def plan_of(name: str, tmp: Path) -> PlanDocument:
    if name == "seed-torus-arista":
        return plan_from_file(SEED).to_document()
    if name == "torus-16x16":
        return plan_from_file(SEED, TORUS_16).to_document()
    inv = tmp / "eos-trunk-hosts.yaml"
    inv.write_text(yaml.safe_dump(oracle.TRUNK_HOSTS, sort_keys=False))
    return plan_from_file(inv).to_document()


@dataclass
class Bundle:
    doc: PlanDocument
    plan: dict[str, object]
    configs: dict[str, str]          # vlanroute's switches/<switch>.cfg
    intents: dict[str, oracle.Intent]
    avd: dict[str, str]              # pyavd's rendered config per switch


def bundle(name: str, tmp: Path) -> Bundle:
    doc = plan_of(name, tmp)
    files = render_files(doc)
    plan = json.loads(files["plan.json"])
    intents = {sw: oracle.intent(plan, sw) for sw in sorted(doc.switches)}
    return Bundle(doc, plan, {sw: files[f"switches/{sw}.cfg"] for sw in intents}, intents,
                  {sw: oracle.avd_config(i) for sw, i in intents.items()})


@pytest.fixture(scope="module")
def small_bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Bundle]:
    tmp = tmp_path_factory.mktemp("avd")
    return {name: bundle(name, tmp) for name in ("seed-torus-arista", "eos-trunk-hosts")}


def documented_rows() -> dict[str, str]:
    """id -> the row of docs/platforms/arista-eos.md's table of known differences."""
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| (avd-\d+) \|.*$", DOCS.read_text(), re.MULTILINE)}


def test_every_known_difference_is_a_row_of_the_docs_table_and_back() -> None:
    assert set(documented_rows()) == set(oracle.KNOWN)


def check(b: Bundle) -> tuple[list[str], set[str]]:
    problems: list[str] = []
    seen: set[str] = set()
    for sw, intent in b.intents.items():
        c = oracle.compare(b.configs[sw], b.avd[sw], intent)
        problems += [f"{sw}: {p}" for p in c.unexplained + c.absent]
        seen |= c.seen
    return problems, seen


@pytest.mark.slow
@pytest.mark.parametrize("name", ["seed-torus-arista", "eos-trunk-hosts"])
def test_pyavd_renders_what_vlanroute_renders_on_every_switch(name: str, small_bundles: dict[str, Bundle]) -> None:
    b = small_bundles[name]
    problems, seen = check(b)
    assert not problems, "differences with AVD that docs/platforms/arista-eos.md does not list:\n" + "\n".join(problems)
    # The comparison compared something: every switch has VLANs, trunks and AVD's own lines.
    for sw, text in b.avd.items():
        assert "switchport trunk allowed vlan" in text and "mac address-table aging-time" in text, sw
    if name == "eos-trunk-hosts":
        assert any("switchport trunk allowed vlan none" in t for t in b.avd.values())
        assert any("flowcontrol receive off" in t for t in b.avd.values())
    assert seen == set(oracle.KNOWN)


@pytest.mark.slow
def test_pyavd_renders_what_vlanroute_renders_on_the_256_switches_of_a_16x16_torus(tmp_path: Path) -> None:
    b = bundle("torus-16x16", tmp_path)
    assert len(b.intents) == 256 and len(b.doc.vlans) == 128
    problems, seen = check(b)
    assert not problems, "\n".join(problems[:40])
    assert seen == {"avd-1", "avd-2"}             # single cables: no LAG, so no hash line


def test_the_oracle_derives_the_intent_from_the_plan_not_from_the_rendered_text() -> None:
    """By hand, for a 3-switch ring: the intent is what the plan's trees and cabling say."""
    plan = {
        "vlans": [{"id": 101, "links": [["a", "b"], ["b", "c"]]}, {"id": 102, "links": [["a", "c"], ["a", "b"]]}],
        "cabling": [{"a": "a", "a_port": "Ethernet47", "b": "b", "b_port": "Ethernet48", "a_lag": None, "b_lag": None},
                    {"a": "a", "a_port": "Ethernet45", "b": "c", "b_port": "Ethernet48", "a_lag": 2, "b_lag": 1},
                    {"a": "a", "a_port": "Ethernet46", "b": "c", "b_port": "Ethernet47", "a_lag": 2, "b_lag": 1},
                    {"a": "b", "a_port": "Ethernet47", "b": "c", "b_port": "Ethernet46", "a_lag": None, "b_lag": None}],
        "hosts": {"h1": {"switch": "a", "port": "Ethernet1", "vlan": 102}},
        "settings": {"flow_control": False, "aging_time": None},
        "switches": {"a": {"platform": "p"}, "b": {"platform": "p"}},
        "platforms": {"p": {"aging_max": 1000000}},
    }
    i = oracle.intent(plan, "a")
    assert i.trunks == {"Ethernet47": {101, 102}, "Port-Channel2": {102}}
    assert i.members == {"Ethernet45": 2, "Ethernet46": 2}
    assert i.host_ports == {"Ethernet1": 102} and i.vlans == {101, 102}
    assert (i.flow_control, i.aging_time) == (False, 1000000)
    sc = oracle.structured_config(i)
    assert [e["name"] for e in sc["ethernet_interfaces"]] == ["Ethernet1", "Ethernet45", "Ethernet46", "Ethernet47"]
    assert sc["port_channel_interfaces"][0]["switchport"]["trunk"]["allowed_vlan"] == "102"
    assert oracle.intent(plan, "b").trunks == {"Ethernet48": {101, 102}, "Ethernet47": {101}}


def test_the_block_reader_ignores_only_what_eos_ignores() -> None:
    a = "configure\nvlan 5\nexit\ninterface Ethernet1\n   x\nexit\ninterface Ethernet1\n   y\nexit\nend\n"
    b = "!\ninterface Ethernet1\n   y\n   x\n!\nvlan 5\n!\n"
    assert oracle.differences(a, b) == set()
    assert oracle.differences(a, b.replace("   y", "   z")) == {
        ("interface Ethernet1", "vlanroute", "y"), ("interface Ethernet1", "avd", "z")}
    assert oracle.differences(a, b.replace("vlan 5", "vlan 6")) == {("vlan 5", "vlanroute", ""), ("vlan 6", "avd", "")}


# -- a changed template line is reported ------------------------------------------------------

def template_source() -> str:
    env = environment()
    assert env.loader is not None
    return env.loader.get_source(env, TEMPLATE)[0]


def config_lines(source: str) -> list[int]:
    """Indexes of the template's lines that emit a config line (not the header comment,
    Jinja statements, `!` comments, or the mode changes the comparison leaves out)."""
    lines = source.splitlines()
    start = next(n for n, line in enumerate(lines) if line.rstrip().endswith("-#}")) + 1
    return [n for n in range(start, len(lines))
            if (s := lines[n].strip()) and not s.startswith(("{%", "{#", "!")) and s not in ("exit", "configure", "end")]


# Deliberate changes of meaning, each (old, new) found exactly once in the template.
CHANGES = [
    ("switchport trunk native vlan {{ hp.pvid }}", "switchport trunk native vlan {{ hp.pvid + 1 }}"),
    ("allowed vlan {{ routing_vlans | vlanlist }}", "allowed vlan {{ routing_vlans[1:] | vlanlist }}"),
    ("{{ link.tagged_list if link.tagged else 'none' }}", "{{ link.tagged_list if link.tagged else '1' }}"),
    ("{{ lag.tagged_list if lag.tagged else 'none' }}", "{{ lag.remove_list }}"),
    ("channel-group {{ lag.id }} mode on", "channel-group {{ lag.id }} mode active"),
    ("set STP_OFF = 'spanning-tree bpdufilter enable'", "set STP_OFF = 'spanning-tree bpduguard enable'"),
    ("aging-time {{ settings.aging_time }}", "aging-time {{ settings.aging_time // 2 }}"),
    ("flowcontrol receive {{ 'on' if settings.flow_control else 'off' }}", "flowcontrol receive on"),
    ("flowcontrol send {{ 'on' if settings.flow_control else 'off' }}", "flowcontrol send on"),
    ("source-port destination-port'}", "source-port'}"),
    ("{% for v in vlans %}", "{% for v in vlans[1:] %}"),
    ("{% for m in lag.members %}", "{% for m in lag.members[1:] %}"),
    ("{% for p in managed_ports %}", "{% for p in managed_ports[1:] %}"),
    ("{% if lags %}", "{% if True %}"),
    ("   switchport mode trunk\n   switchport trunk native", "   switchport mode access\n   switchport trunk native"),
]


def mutants(source: str) -> list[tuple[str, str]]:
    """(what was changed, the changed template): every config line deleted, then CHANGES."""
    lines = source.splitlines(keepends=True)
    out = [(f"line {n + 1} deleted: {lines[n].strip()!r}", "".join(lines[:n] + lines[n + 1:]))
           for n in config_lines(source)]
    for old, new in CHANGES:
        assert source.count(old) == 1, old
        out.append((f"{old!r} -> {new!r}", source.replace(old, new)))
    return out


def render_with(template_dir: Path, doc: PlanDocument) -> dict[str, str]:
    """Every switch's config rendered with template_dir's copy of the EOS template first."""
    env = environment()
    assert env.loader is not None
    env.loader = jinja2.ChoiceLoader([jinja2.FileSystemLoader(str(template_dir)), env.loader])
    platforms = platforms_of(doc)
    index = DocIndex.of(doc)
    return {sw: render_switch(switch_context(doc, sw, platforms[sw], index), env) for sw in sorted(doc.switches)}


def reported(b: Bundle, configs: dict[str, str]) -> bool:
    return any(not oracle.compare(configs[sw], b.avd[sw], i).ok for sw, i in b.intents.items())


@pytest.mark.slow
def test_every_changed_template_line_is_reported(small_bundles: dict[str, Bundle], tmp_path: Path) -> None:
    source = template_source()
    (tmp_path / "switch").mkdir()
    copy = tmp_path / "switch" / "arista-eos.j2"
    copy.write_text(source)
    # The unchanged copy renders what render_files did, and nothing is reported.
    for b in small_bundles.values():
        assert render_with(tmp_path, b.doc) == b.configs
        assert not reported(b, b.configs)
    all_mutants = mutants(source)
    assert len(all_mutants) >= len(CHANGES) + 20
    missed = []
    for what, text in all_mutants:
        copy.write_text(text)
        if not any(reported(b, render_with(tmp_path, b.doc)) for b in small_bundles.values()):
            missed.append(what)
    assert not missed, "template changes the comparison with AVD does not report:\n" + "\n".join(missed)


def test_a_changed_line_makes_the_comparison_fail_where_it_was_changed(tmp_path: Path) -> None:
    """One mutant by hand, on a small fabric, showing the report a reader gets."""
    doc = plan_from_file(SEED, ["topology.dims=[3,1]", "topology.links_per_pair=1", "hosts.count=null",
                                "hosts.per_switch=1", "switches={}", "routing.algorithm=dor"]).to_document()
    plan = json.loads(doc.to_json_text())
    (tmp_path / "switch").mkdir()
    (tmp_path / "switch" / "arista-eos.j2").write_text(
        template_source().replace("switchport trunk native vlan {{ hp.pvid }}", "switchport trunk native vlan 1"))
    configs = render_with(tmp_path, doc)
    i = oracle.intent(plan, "sw1")
    c = oracle.compare(configs["sw1"], oracle.avd_config(i), i)
    native = plan["hosts"][next(h for h, d in plan["hosts"].items() if d["switch"] == "sw1")]["vlan"]
    assert c.unexplained == [f"'interface Ethernet1': only AVD has 'switchport trunk native vlan {native}'",
                             "'interface Ethernet1': only vlanroute has 'switchport trunk native vlan 1'"]

