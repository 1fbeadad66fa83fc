"""`vlanroute report`: one self-contained, escaped HTML page, shown by a real headless Chromium."""

from __future__ import annotations

import base64
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vlanroute.cli import main
from vlanroute.plan.build import plan_from_file
from vlanroute.pictures.report import report_html, write_report

REPO = Path(__file__).resolve().parent.parent
TORUS = str(REPO / "inventories" / "seed-torus.yaml")


class _Page(HTMLParser):
    """Collects what the checks need: every URL-bearing attribute and the table rows by section."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []
        self.tags: list[str] = []
        self.rows_after: dict[str, int] = {}
        self._section = ""
        self._in_h2 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for k, v in attrs:
            if k in ("src", "href", "srcset", "action", "data") and v is not None:
                self.urls.append((tag, k, v))
        if tag == "h2":
            self._in_h2 = True
            self._section = dict(attrs).get("id") or ""
        if tag == "tr":
            self.rows_after[self._section] = self.rows_after.get(self._section, 0) + 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2":
            self._in_h2 = False


@pytest.fixture(scope="module")
def torus_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    assert main(["report", TORUS, "-o", str(out)]) == 0
    return out


def test_report_is_self_contained_and_complete(torus_report: Path) -> None:
    html = torus_report.read_text()
    page = _Page()
    page.feed(html)
    # Nothing to fetch: every picture is a data: URI, no scripts, stylesheets or links out.
    imgs = [v for tag, k, v in page.urls if tag == "img"]
    assert len(imgs) == 9                     # topology, link load, failure cut, overview, 4 VLANs, throughput chart
    assert all(v.startswith("data:image/svg+xml;base64,") for v in imgs)
    assert [u for u in page.urls if not u[2].startswith(("data:", "#"))] == []     # "#": links within the page
    assert "script" not in page.tags and "link" not in page.tags and "@import" not in html
    for v in imgs:
        svg = base64.b64decode(v.split(",", 1)[1])
        assert svg.startswith(b"<?xml") and b"<svg" in svg
    # VLAN table: header + 4 VLANs; one port table per switch with every planned port.
    assert page.rows_after["vlans"] == 5
    plan = plan_from_file(TORUS)
    for name, sw in plan.switches.items():
        assert f'id="sw-{name}"' in html
        for port in sw.ports:
            assert f"<td>{port}</td>" in html
    assert "1624 per cable = x1.027 the lower bound 1582" in html
    assert "at most 900 per switch (capacity 8192)" in html


def test_report_shows_the_unconfirmed_syntax_render_warns_about(torus_report: Path) -> None:
    from html import escape

    from vlanroute.drivers import FAMILIES
    html = torus_report.read_text()
    family = FAMILIES["powerconnect-62xx"]
    assert family.unconfirmed                              # else this test checks nothing
    assert 'warning: PowerConnect 62xx syntax that no public source confirms' in html
    for item in family.unconfirmed:
        assert escape(item, quote=False) in html or escape(item) in html, item


def test_everything_from_the_plan_is_escaped() -> None:
    plan = plan_from_file(TORUS)
    plan.warnings.append('<script>alert("x")</script> & <img src=x>')
    html = report_html(plan, max_vlans=1)
    assert "<script>" not in html and "<img src=x>" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;img src=x&gt;" in html


def test_large_fabric_report_uses_png_and_says_what_is_left_out() -> None:
    plan = plan_from_file(TORUS, ["topology.dims=[9,8]", "topology.links_per_pair=1", "platform=linux-bridge",
                                  "switches={}", "hosts={per_switch: 1}"])
    html = report_html(plan, max_vlans=2)
    assert html.count('src="data:image/png;base64,') == 6
    assert f"Left out: per-VLAN pictures of {len(plan.vlans) - 2} of {len(plan.vlans)} VLANs" in html


def test_refuses_to_overwrite_a_file_it_did_not_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "notes.html"
    target.write_text("<html>my notes</html>")
    assert main(["report", TORUS, "-o", str(target)]) == 2
    assert "was not written by `vlanroute report`; refusing to replace it" in capsys.readouterr().err
    assert target.read_text() == "<html>my notes</html>"
    # An earlier report is replaced, through a temporary file that does not stay behind.
    mine = tmp_path / "report.html"
    plan = plan_from_file(TORUS)
    write_report(plan, mine, max_vlans=0)
    write_report(plan, mine, max_vlans=1)
    assert mine.read_text().count("<img ") == 6     # 4 pictures, 1 VLAN, the throughput chart
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.html", "report.html"]
    assert main(["report", TORUS, "-o", str(tmp_path / "missing" / "r.html")]) == 2
    assert "the directory" in capsys.readouterr().err


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed (.ci/packages.txt lists it)")
    pytest.skip("chromium is not installed: apt-get install chromium")


@pytest.mark.browser
@pytest.mark.timeout(180)
def test_report_displays_in_headless_chromium_without_network(torus_report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    # Every host name resolves to nothing: the page must display from the file alone.
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--disable-dev-shm-usage", "--host-resolver-rules=MAP * ~NOTFOUND",
           f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,4000", "--hide-scrollbars",
           f"--screenshot={shot}", torus_report.as_uri()]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=150, stdin=subprocess.DEVNULL)
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    with Image.open(shot) as im:
        assert im.size == (1200, 4000)
        img = np.asarray(im.convert("RGB")).astype(int)
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 50          # not blank, not one flat colour
    text = (img.max(axis=2) < 100).mean()
    assert text > 0.003, text                                       # the summary and tables
    # The inlined pictures were decoded and drawn: the sources' orange appears (the overview
    # and the VLAN pictures lie within the first 4000 pixels of the page).
    orange = (np.abs(img - (0xF2, 0x8E, 0x2B)).max(axis=2) <= 30).sum()
    assert orange > 200, orange


def test_report_charts_the_throughput_against_other_cablings(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    inv = Path(TORUS).parent
    assert main(["report", str(inv / "seed-tree-1link.yaml"), "-o", str(out),
                 "--compare", str(inv / "seed-complete.yaml")]) == 0
    html = out.read_text()
    assert 'id="throughput-chart"' in html and "relative to seed-tree-1link" in html
    # The table under the chart: the complete graph's permutation row, x first and x STP as analyze prints them.
    assert re.search(r"<td>permutation \(3 seeds\)</td><td>seed-complete</td><td class=\"num\">64.29</td>\s*"
                     r"<td class=\"num\">18.00</td><td class=\"num\">3.86</td>", html)


def test_a_pattern_without_throughput_is_a_dash_in_the_chart_and_the_table(tmp_path: Path) -> None:
    """Three switches of one host each: the permutation pattern moves nothing, so the first
    plan's rate there is 0 and "x first" has no value (it crashed the chart's bars)."""
    inv = tmp_path / "three.yaml"
    inv.write_text("name: t\ntopology: {kind: ring, size: 3}\nhosts: {count: 3}\n")
    out = tmp_path / "r.html"
    assert main(["report", str(inv), "-o", str(out)]) == 0
    html = out.read_text()
    row = re.search(r"<tr><td>permutation \(3 seeds\)</td><td>t</td><td class=\"num\">0.00</td>\s*"
                    r"<td class=\"num\">([^<]*)</td>", html)
    assert row and row[1] == "-"
    assert 'id="throughput-chart"' in html


def test_an_output_that_is_not_a_regular_file_is_refused_unread(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """/dev/zero was read whole to look for the report's generator line (memory without end),
    and a FIFO blocked forever (found by fuzzing the CLI)."""
    inv = tmp_path / "t.yaml"
    inv.write_text("name: t\ntopology: {kind: ring, size: 3}\nhosts: {count: 3}\n")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for target in (Path("/dev/zero"), fifo):
        assert main(["report", str(inv), "-o", str(target)]) == 2
        assert f"{target} is not a regular file; refusing to replace it" in capsys.readouterr().err
