"""Every user mistake ends in a message naming the file and the field, a non-zero exit, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vlanroute.cli import main

BASE = {
    "name": "t", "platform": "powerconnect-6248",
    "topology": {"kind": "torus", "dims": [4, 2], "links_per_pair": 2},
    "hosts": {"per_switch": 4},
}


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: dict | str, *sets: str) -> tuple[int, str]:
    p = tmp_path / "inv.yaml"
    p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    args = ["plan", str(p)]
    for s in sets:
        args += ["--set", s]
    rc = main(args)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return rc, err


def with_(path: str, value: object) -> dict:
    import copy
    doc = copy.deepcopy(BASE)
    node = doc
    keys = path.split(".")
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    node[keys[-1]] = value
    return doc


CASES = [
    # (description, document, words the message must contain)
    ("unknown key", with_("topology.link_per_pair", 2), ["inv.yaml", "topology.link_per_pair", "unknown key"]),
    ("bad kind", with_("topology.kind", "donut"), ["topology.kind", "ring"]),
    ("vlan id too high", with_("routing.first_vlan", 4095), ["routing.first_vlan", "4094"]),
    ("vlan id 1", with_("routing.vlan_ids", [1, 2, 3, 4]), ["routing.vlan_ids"]),
    ("duplicate vlan ids", with_("routing.vlan_ids", [5, 5, 6, 7]), ["duplicate VLAN ids"]),
    # An explicit engine: without one, the default keeps a plan that fits (routing/choose.py).
    ("id range overflow", {**with_("routing.first_vlan", 4093), "routing": {"first_vlan": 4093, "algorithm": "dor"}},
     ["routing.first_vlan", "4094"]),
    ("too few listed ids", {**BASE, "routing": {"vlan_ids": [200, 201], "algorithm": "dor"}}, ["routing.vlan_ids", "4 VLANs"]),
    ("name injection", with_("name", "x; reboot"), ["name"]),
    ("unknown platform", with_("platform", "cisco-9000"), ["platform", "powerconnect-6248"]),
    ("unknown switch override", with_("switches", {"sw99": {"mgmt": "192.0.2.1"}}), ["switches.sw99", "unknown switch"]),
    ("reserved port not on platform", with_("switches", {"sw1": {"reserved_ports": ["1/g49"]}}),
     ["switches.sw1.reserved_ports", "1/g49"]),
    ("duplicate mgmt", with_("switches", {"sw1": {"mgmt": "192.0.2.1"}, "sw2": {"mgmt": "192.0.2.1"}}),
     ["switches.sw2.mgmt", "192.0.2.1"]),
    ("too many ports", with_("hosts.per_switch", 45), ["sw1", "51", "48"]),
    ("mac overflow", {**with_("platforms", {"small": {"base": "powerconnect-6248", "mac_capacity": 100}}), "platform": "small",
                      "routing": {"algorithm": "dor"}},
     ["MAC", "100", "sw1"]),
    ("vlan limit", {**with_("platforms", {"tiny": {"base": "powerconnect-6248", "max_vlans": 3}}), "platform": "tiny",
                    "routing": {"algorithm": "dor"}},
     ["4 VLANs", "tiny"]),
    ("aging out of range", with_("settings.aging_time", 5), ["settings.aging_time", "10"]),
    ("dor on custom", {"name": "t", "topology": {"kind": "custom", "switches": ["a", "b"], "links": [{"a": "a", "b": "b"}]},
                       "hosts": {"per_switch": 1}, "routing": {"algorithm": "dor"}}, ["routing.algorithm", "shortest"]),
    ("link to unknown switch", {"name": "t", "topology": {"kind": "custom", "switches": ["a", "b"],
                                                           "links": [{"a": "a", "b": "c"}]}, "hosts": {"per_switch": 1}},
     ["topology.links.0", "unknown switch 'c'"]),
    ("disconnected", {"name": "t", "topology": {"kind": "custom", "switches": ["a", "b", "c", "d"],
                                                 "links": [{"a": "a", "b": "b"}, {"a": "c", "b": "d"}]},
                      "hosts": {"per_switch": 1}}, ["disconnected"]),
    ("duplicate switch", {"name": "t", "topology": {"kind": "custom", "switches": ["a", "a"], "links": [{"a": "a", "b": "a"}]},
                          "hosts": {"per_switch": 1}}, ["topology"]),
    ("duplicate host names", with_("hosts", {"list": [{"name": "h1", "switch": "sw1"}, {"name": "h1", "switch": "sw2"}]}),
     ["h1", "twice"]),
    ("duplicate MACs", with_("hosts", {"list": [{"name": "h1", "switch": "sw1", "mac": "00:11:22:33:44:55"},
                                                 {"name": "h2", "switch": "sw2", "mac": "00-11-22-33-44-55"}]}),
     ["00:11:22:33:44:55", "h1", "h2"]),
    ("bad MAC", with_("hosts", {"list": [{"name": "h1", "switch": "sw1", "mac": "zz:11"}]}), ["hosts.list.0.mac"]),
    ("duplicate ports", with_("hosts", {"list": [{"name": "h1", "switch": "sw1", "port": "1/g3"},
                                                  {"name": "h2", "switch": "sw1", "port": "1/g3"}]}), ["sw1:1/g3", "h1", "h2"]),
    ("port not on platform", with_("hosts", {"list": [{"name": "h1", "switch": "sw1", "port": "1/g77"}]}),
     ["1/g77", "powerconnect-6248"]),
    ("host on reserved port", {**with_("hosts", {"list": [{"name": "h1", "switch": "sw1", "port": "1/g3"}]}),
                               "switches": {"sw1": {"reserved_ports": ["1/g3"]}}}, ["sw1:1/g3", "reserved"]),
    ("host on unknown switch", with_("hosts", {"list": [{"name": "h1", "switch": "sw42"}]}), ["sw42"]),
    ("two host sources", with_("hosts", {"per_switch": 1, "count": 3}), ["exactly one of"]),
    ("no hosts", with_("hosts", {"per_switch": 0}), ["no hosts"]),
    ("learning pool too small", with_("settings", {"learning": {"pool": "10.0.0.0/28"}}), ["settings.learning.pool"]),
    ("description injection", {**with_("platforms", {"p": {"base": "powerconnect-6248", "description": "x\nreload"}}),
                               "platform": "p"}, ["platforms.p.description"]),
    ("refresh slower than aging allows", with_("settings", {"aging_time": 3600, "learning": {"interval": 3000}}),
     ["inv.yaml", "settings.learning.interval", "half the aging time"]),
    ("interface injection", with_("hosts", {"per_switch": 1, "interface": "eth0;rm"}), ["hosts.interface"]),
    ("interface name too long", with_("hosts", {"per_switch": 1, "interface": "enp129s0f1np1x01"}),
     ["hosts.interface", "16 characters", "at most 15 (IFNAMSIZ"]),
    ("interface with a dot", with_("hosts", {"list": [{"name": "h1", "switch": "sw1", "interface": "eth0.5"}]}),
     ["hosts.list.0.interface", "'eth0.5'", "no dots"]),
    ("sub-interface prefix too long", with_("settings", {"learning": {"interface_prefix": "abcdefghijklmno"}}),
     ["settings.learning.interface_prefix", "15 characters"]),
]


@pytest.mark.parametrize("desc,doc,words", CASES, ids=[c[0] for c in CASES])
def test_user_mistake_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str], desc: str, doc: dict,
                               words: list[str]) -> None:
    rc, err = run(tmp_path, capsys, doc)
    assert rc != 0, desc
    for w in words:
        assert w in err, f"{desc}: '{w}' not in message:\n{err}"


def test_yaml_syntax_error_names_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = run(tmp_path, capsys, "name: t\ntopology: [unclosed\n")
    assert rc != 0 and "inv.yaml" in err and "line" in err


def test_duplicate_yaml_key_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = run(tmp_path, capsys, "name: t\nname: u\n")
    assert rc != 0 and "duplicate key 'name'" in err


def test_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "/nonexistent/inv.yaml"]) != 0
    assert "no such file" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["topology.links_per_pair", "=3", "a..b=1", "topology.dims=[unclosed"])
def test_bad_set_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str) -> None:
    rc, err = run(tmp_path, capsys, BASE, bad)
    assert rc != 0 and "--set" in err


def test_set_overrides_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(BASE))
    assert main(["plan", str(p), "--json", "--set", "topology.dims=[8,8]", "--set", "topology.links_per_pair=1",
                 "--set", "hosts.per_switch=2", "--set", "settings.flow_control=false"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["topology"]["dims"] == [8, 8] and plan["metrics"]["switches"] == 64
    assert plan["metrics"]["inter_switch_links"] == 128 and plan["settings"]["flow_control"] is False


def test_set_error_names_the_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err = run(tmp_path, capsys, BASE, "topology.links_per_pair=zero")
    assert rc != 0 and "--set topology.links_per_pair" in err


def test_long_nic_names_render(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 15 characters are Linux's limit and accepted; the sub-interfaces are vr101 ... whatever
    # the NIC is called. A prefix is refused only when prefix + VLAN id would not fit.
    out = tmp_path / "out"
    inv = tmp_path / "inv.yaml"
    inv.write_text(yaml.safe_dump(with_("hosts", {"per_switch": 1, "interface": "enp129s0f1np1"})))
    assert main(["render", str(inv), "-o", str(out)]) == 0
    assert "node001\tenp129s0f1np1\t-\t101\t0" in (out / "hosts" / "hosts.tsv").read_text()
    assert "\nPREFIX=vr\n" in (out / "hosts" / "vlanroute-host").read_text()
    capsys.readouterr()
    inv.write_text(yaml.safe_dump({**with_("hosts", {"per_switch": 1}),
                                   "settings": {"learning": {"interface_prefix": "vlanlearning"}},
                                   "routing": {"first_vlan": 1001}}))
    assert main(["render", str(inv), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "settings.learning.interface_prefix" in err and "vlanlearning1001" in err and "15" in err
    assert "fix: use a prefix of at most 11 characters" in err


@pytest.mark.parametrize(("path", "pattern", "field"), [
    ("topology.switch_name", "s{index[0]}", "{index[0]}"),     # str.format would index an int
    ("topology.switch_name", "s{coord.x}", "{coord.x}"),       # ...or look up an attribute
    ("topology.switch_name", "s{index!r}{coord}", "{index!r}"),
    ("hosts.name", "n{n[0]}", "{n[0]}"),
    ("hosts.name", "h{switch.upper}{n}", "{switch.upper}"),
    ("hosts.name", "h{}{n}", "{}"),
])
def test_a_name_pattern_replaces_only_its_own_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str], path: str,
                                                     pattern: str, field: str) -> None:
    rc, err = run(tmp_path, capsys, with_(path, pattern))
    assert rc != 0 and path in err and f"has the field {field}" in err
    assert "optional format such as" in err


@pytest.mark.parametrize(("path", "pattern"), [("topology.switch_name", "sw{index:02d}-{coord}"),
                                               ("hosts.name", "h{switch}-{i:02d}")])
def test_a_name_pattern_with_formats_of_its_own_fields_plans(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             path: str, pattern: str) -> None:
    assert run(tmp_path, capsys, with_(path, pattern))[0] == 0


@pytest.mark.parametrize(("text", "line"), [
    ("? [a, b]\n: c\nname: t\n", 1),                                           # a list as a key
    ("name: t\ntopology: {kind: ring, size: 3, ? {x: 1}: 2}\nhosts: {count: 3}\n", 2),   # a mapping as a key
])
def test_a_list_or_mapping_as_a_key_is_a_yaml_error_at_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 text: str, line: int) -> None:
    rc, err = run(tmp_path, capsys, text)       # was a TypeError (unhashable) in the duplicate-key check
    assert rc != 0 and f"line {line}," in err and "a key must be a name or a number" in err


@pytest.mark.parametrize(("limits", "said"), [
    ({"aging_min": 100, "aging_max": 10}, "aging_min 100 is above aging_max 10"),
    ({"vid_min": 4000, "vid_max": 3000}, "vid_min 4000 is above vid_max 3000"),
    ({"aging_min": 30, "aging_default": 10}, "aging_min 30 is above aging_default 10"),
])
def test_a_platforms_inverted_limits_are_named_where_written(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             limits: dict[str, int], said: str) -> None:
    # were accepted, then blamed on settings.aging_time or routing.first_vlan ("outside 100..10 s")
    doc = {**BASE, "platform": "myplat", "platforms": {"myplat": {"base": "powerconnect-6248", **limits}}}
    rc, err = run(tmp_path, capsys, doc)
    assert rc != 0 and "platforms.myplat" in err and said in err
    assert "settings.aging_time" not in err and "routing.first_vlan" not in err
