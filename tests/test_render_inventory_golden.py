"""A small inventory through the whole pipeline (`vlanroute render` on a YAML file), one
hand-written expected config per platform family (tests/golden/triangle/README.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from render_fixtures import PORTS
from vlanroute.cli import main

GOLDEN = Path(__file__).parent / "golden" / "triangle"


@pytest.mark.parametrize("platform, switch", [
    ("powerconnect-6224", "sw1"),
    ("powerconnect-8132", "sw2"),
    ("apresia-15000-64xl", "sw3"),
])
def test_inventory_renders_hand_written_config(tmp_path: Path, platform: str, switch: str) -> None:
    port = PORTS["powerconnect-6248" if platform == "powerconnect-6224" else platform]
    text = (GOLDEN / "triangle.yaml").read_text().replace("PLATFORM", platform)
    if platform == "apresia-15000-64xl":
        # AEOS host ports need the inventory's confirmation (docs/platforms/apresia-aeos.md).
        text = text.replace(f"platform: {platform}", "platform: aeos-confirmed\nplatforms:\n"
                            f"  aeos-confirmed: {{base: {platform}, confirm: [host-untagged-in-many-vlans]}}")
    text = re.sub(r"PORT\((\d+)\)", lambda m: port(int(m.group(1))), text)
    inventory = tmp_path / "triangle.yaml"
    inventory.write_text(text)
    assert main(["render", str(inventory), "-o", str(tmp_path / "out")]) == 0
    rendered = (tmp_path / "out" / "switches" / f"{switch}.cfg").read_text()
    assert rendered == (GOLDEN / f"{platform}-{switch}.cfg").read_text()


def test_aeos_without_the_inventory_confirmation_gets_trunk_host_ports(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    port = PORTS["apresia-15000-64xl"]
    text = (GOLDEN / "triangle.yaml").read_text().replace("PLATFORM", "apresia-15000-64xl")
    text = re.sub(r"PORT\((\d+)\)", lambda m: port(int(m.group(1))), text)
    inventory = tmp_path / "triangle.yaml"
    inventory.write_text(text)
    assert main(["plan", str(inventory)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "host attachment: trunk on every switch (APRESIA AEOS: no public source shows an AEOS port" in out
    assert main(["render", str(inventory), "-o", str(tmp_path / "out")]) == 0
    rendered = (tmp_path / "out" / "switches" / "sw3.cfg").read_text()
    assert rendered == (GOLDEN / "apresia-15000-64xl-trunk-sw3.cfg").read_text()
    # Untagged host ports forced on it: refused, naming the fact and both ways out.
    assert main(["plan", str(inventory), "--set", "settings.host_attachment=untagged"]) == 2
    err = capsys.readouterr().err
    assert "settings.host_attachment: untagged host attachment asked for, but platform 'apresia-15000-64xl'" in err
    assert "confirm: [host-untagged-in-many-vlans]" in err and "host_attachment: trunk" in err
