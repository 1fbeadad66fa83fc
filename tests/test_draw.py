"""`vlanroute draw`: every picture type for the seed torus, read back as images; layouts;
what large fabrics leave out; atomic output; user mistakes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlanroute.errors import UserError
from vlanroute.pictures import draw as D
from vlanroute.cli import main
from vlanroute.pictures.layout import compute_layout
from vlanroute.plan.build import plan_from_file

REPO = Path(__file__).resolve().parent.parent
TORUS = str(REPO / "inventories" / "seed-torus.yaml")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _rgb(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        im.verify()                      # checks the PNG chunks and their CRCs
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB")).astype(int)


def _pixels_near(img: np.ndarray, hex_colour: str, tol: int = 30) -> int:
    want = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(img - want).max(axis=2) <= tol).sum())


@pytest.fixture(scope="module")
def torus_png(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("draw") / "pics"
    assert main(["draw", TORUS, "-o", str(out), "--format", "png"]) == 0
    return out


def test_seed_torus_every_picture_is_a_valid_png_of_sensible_size(torus_png: Path) -> None:
    files = sorted(p.relative_to(torus_png).as_posix() for p in torus_png.rglob("*.png"))
    assert files == ["failure-cut.png", "link-load.png", "topology.png", "vlans-overview.png",
                     "vlans/vlan-101.png", "vlans/vlan-102.png", "vlans/vlan-103.png", "vlans/vlan-104.png"]
    for rel in files:
        path = torus_png / rel
        assert path.read_bytes()[:8] == PNG_MAGIC, rel
        img = _rgb(path)
        h, w, _ = img.shape
        assert 400 <= w <= 2000 and 300 <= h <= 2000, (rel, w, h)
        white = (img >= 250).all(axis=2).mean()
        assert 0.5 < white < 0.995, (rel, white)       # mostly background, but something drawn


def test_seed_torus_vlan_pictures_highlight_their_tree_and_sources(torus_png: Path) -> None:
    topo = _rgb(torus_png / "topology.png")
    assert _pixels_near(topo, D.TREE) == 0 and _pixels_near(topo, D.SOURCE) == 0
    for vid in (101, 102, 103, 104):
        img = _rgb(torus_png / "vlans" / f"vlan-{vid}.png")
        assert _pixels_near(img, D.TREE) > 2000, vid       # 7 thick tree links
        assert _pixels_near(img, D.SOURCE) > 200, vid      # 2 source boxes (+ legend marker)
    # The link-load picture colours cables from the colormap, not grey or black.
    load = _rgb(torus_png / "link-load.png")
    colourful = (load.max(axis=2) - load.min(axis=2)) > 60
    assert colourful.sum() > 3000
    # So does the failure-cut one (on the seed torus every pair's failure cuts host pairs).
    cut = _rgb(torus_png / "failure-cut.png")
    assert ((cut.max(axis=2) - cut.min(axis=2)) > 60).sum() > 3000


def test_index_lists_every_file_and_nothing_left_out_for_the_seed_torus(torus_png: Path) -> None:
    text = (torus_png / D.INDEX_FILE).read_text()
    assert text.startswith("vlanroute draw: seed-torus (8 switches, 4 VLANs)")
    for rel in ("topology.png", "link-load.png", "vlans-overview.png", "vlans/vlan-104.png"):
        assert rel in text
    assert "left out" not in text


def test_svg_format_writes_parseable_svg(tmp_path: Path) -> None:
    out = tmp_path / "svg"
    assert main(["draw", TORUS, "-o", str(out), "--format", "svg", "--vlans", "102"]) == 0
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.svg"))
    assert files == ["failure-cut.svg", "link-load.svg", "topology.svg", "vlans-overview.svg", "vlans/vlan-102.svg"]
    for f in files:
        root = ET.parse(out / f).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg"
    # Same plan, same bytes: no date in the SVG metadata.
    again = tmp_path / "svg2"
    assert main(["draw", TORUS, "-o", str(again), "--format", "svg", "--vlans", "102"]) == 0
    assert (out / "topology.svg").read_bytes() == (again / "topology.svg").read_bytes()


def test_layout_uses_grid_coordinates_and_bends_wraparound_cables() -> None:
    plan = plan_from_file(TORUS)
    lay = compute_layout(plan.topology)
    assert lay.grid and lay.axis_names == ("coordinate 0", "coordinate 1")
    for s in plan.topology.switches:
        c = plan.topology.coords[s]
        assert lay.pos[s] == (c[0], -c[1])
    assert len(lay.edges["sw1", "sw2"]) == 2              # neighbours: a straight line
    assert len(lay.edges["sw1", "sw4"]) > 2               # wrap-around: an arc ...
    assert lay.edges["sw1", "sw4"][:, 1].max() > 0.1      # ... bowed outwards, above row 0
    assert set(lay.cables.values()) == {2}


@pytest.mark.parametrize("inventory,sets", [
    ("seed-torus.yaml", []), ("seed-mesh.yaml", []), ("seed-ring.yaml", []), ("seed-tree.yaml", []),
    ("seed-complete.yaml", []), ("custom-lab.yaml", []),
    ("hyper-crossbar-16x16.yaml", ["topology.dims=[5,4]"]),
    ("seed-torus.yaml", ["topology.dims=[3,3,3]", "platform=linux-bridge", "switches={}"]),
])
def test_no_straight_cable_passes_through_another_switch(inventory: str, sets: list[str]) -> None:
    plan = plan_from_file(REPO / "inventories" / inventory, sets)
    lay = compute_layout(plan.topology)
    pts = np.array(list(lay.pos.values()))
    assert len({tuple(p) for p in pts}) == len(pts)       # no two switches on one spot
    for (a, b), line in lay.edges.items():
        if len(line) != 2:
            continue
        p, q = line
        d = q - p
        t = ((pts - p) @ d) / (d @ d)
        inner = (t > 1e-6) & (t < 1 - 1e-6)
        dist = np.linalg.norm(pts[inner] - (p + np.outer(t[inner], d)), axis=1)
        assert (dist > 0.1).all(), (a, b)


def test_large_fabric_states_what_is_left_out() -> None:
    # 9x8 torus: 72 switches (names dropped), 72 VLANs of which 16 get their own picture.
    plan = plan_from_file(TORUS, ["topology.dims=[9,8]", "topology.links_per_pair=1", "platform=linux-bridge",
                                  "switches={}", "hosts={per_switch: 2}"])
    sel = D.select_pictures(plan)
    vlan_pics = [p for p in sel.pictures if p.name.startswith("vlans/")]
    assert len(vlan_pics) == D.DEFAULT_MAX_VLANS
    n = len(plan.vlans)
    rest = n - D.DEFAULT_MAX_VLANS
    assert any(s.startswith(f"per-VLAN pictures of {rest} of {n} VLANs") for s in sel.left_out), sel.left_out
    assert any(s.startswith("switch names (more than 64 switches)") for s in sel.left_out), sel.left_out
    assert len([p for p in D.select_pictures(plan, max_vlans=0).pictures if p.name.startswith("vlans/")]) == n


def test_failure_while_drawing_leaves_the_old_directory_untouched(tmp_path: Path, torus_png: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    plan = plan_from_file(TORUS)
    out = tmp_path / "pics"
    D.draw_to_dir(plan, out, "png", vlan_ids="101")
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    real = D.figure_bytes
    calls = []

    def failing(fig, fmt):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(fig, fmt)

    monkeypatch.setattr(D, "figure_bytes", failing)
    with pytest.raises(UserError, match="cannot write: no space left on the device"):
        D.draw_to_dir(plan, out, "png")
    after = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert [p.name for p in tmp_path.iterdir()] == ["pics"]     # no temporary directory left behind


def test_redraw_replaces_an_earlier_draw_directory(tmp_path: Path) -> None:
    plan = plan_from_file(TORUS)
    out = tmp_path / "pics"
    D.draw_to_dir(plan, out, "png", vlan_ids="101-104")
    D.draw_to_dir(plan, out, "png", vlan_ids="103")
    assert sorted(p.name for p in (out / "vlans").iterdir()) == ["vlan-103.png"]


@pytest.mark.parametrize("args,message", [
    (["--vlans", "999"], "--vlans: the plan has no VLAN 999"),
    (["--vlans", "101-x"], "--vlans: bad VLAN list '101-x'"),
    (["--max-vlans", "-1"], "--max-vlans must be 0 (all) or more"),
])
def test_user_mistakes_end_in_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        args: list[str], message: str) -> None:
    out = tmp_path / "pics"
    assert main(["draw", TORUS, "-o", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_output_in_a_missing_directory_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["draw", TORUS, "-o", str(tmp_path / "no" / "such" / "pics")]) == 2
    err = capsys.readouterr().err
    assert f"the directory {tmp_path / 'no' / 'such'} does not exist" in err and "Traceback" not in err


def test_refuses_to_replace_a_foreign_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "photos"
    out.mkdir()
    (out / "holiday.png").write_bytes(b"mine")
    assert main(["draw", TORUS, "-o", str(out)]) == 2
    assert "is not an earlier `vlanroute draw` directory" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["holiday.png"]
    assert (out / "holiday.png").read_bytes() == b"mine"


@pytest.mark.parametrize("sets", [
    ["topology.dims=[1,1]", "switches={}", "hosts.count=4"],       # one switch: no cable, no load
    ["topology.dims=[2,1]", "switches={}", "hosts.count=4"],       # two switches, one neighbour pair
])
def test_degenerate_fabrics_still_draw(tmp_path: Path, sets: list[str]) -> None:
    plan = plan_from_file(TORUS, sets)
    result = D.draw_to_dir(plan, tmp_path / "pics", "png")
    assert len(result.files) == 4 + len(plan.vlans)   # topology, link load, failure cut, overview
    for rel in result.files:
        assert (tmp_path / "pics" / rel).read_bytes()[:8] == PNG_MAGIC
