"""The technician's cabling sheet (OUTDIR/cabling.html) and the cables of cabling.csv."""

from __future__ import annotations

import csv
from html.parser import HTMLParser
import io

from render_fixtures import document, ring3_plan
from vlanroute.render.write import render_files


class _Tables(HTMLParser):
    """Section heading -> rows of cells, read back from the HTML (no vlanroute code)."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, list[list[str]]] = {}
        self._h2: str | None = None
        self._text = ""
        self._row: list[str] | None = None
        self._in = ""
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        if tag in ("h2", "td"):
            self._in, self._text = tag, ""
        elif tag == "tr":
            self._row = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "h2":
            self._h2 = self._text.split(" (")[0]
            self.sections[self._h2] = []
            self._in = ""
        elif tag == "td" and self._row is not None:
            self._row.append(self._text.strip())
            self._in = ""
        elif tag == "tr" and self._row and self._h2:
            self.sections[self._h2].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self._text += data


def test_sheet_lists_each_switch_cables_in_port_order_with_far_end_and_label() -> None:
    files = render_files(document(ring3_plan("powerconnect-6248")))
    cables = list(csv.DictReader(io.StringIO(files["cabling.csv"])))
    page = _Tables()
    page.feed(files["cabling.html"])
    assert page.scripts == 0
    assert sorted(page.sections) == ["sw1", "sw2", "sw3"]
    sw1 = page.sections["sw1"]
    # Hand-written from the ring3 fixture: hosts on 1/g1, 1/g2; a 2-cable LAG to sw2; sw3.
    assert [row[0] for row in sw1] == ["1/g1", "1/g2", "1/g21", "1/g22", "1/g24"]
    assert sw1[0][2:5] == ["host node001 eth0", "host", ""]
    assert sw1[2][2:5] == ["sw2 1/g21", "inter-switch", "ch1 to sw2 ch1"]
    assert sw1[4][2:5] == ["sw3 1/g23", "inter-switch", ""]
    label = {(c["a"], c["a_port"]): c["cable"] for c in cables}
    assert sw1[2][1] == label[("sw1", "1/g21")]
    # An inter-switch cable is listed under both switches with the same label.
    sw3 = {row[0]: row for row in page.sections["sw3"]}
    assert sw3["1/g23"][1] == label[("sw1", "1/g24")] and sw3["1/g23"][2] == "sw1 1/g24"
    total = sum(len(rows) for rows in page.sections.values())
    kinds = [c["kind"] for c in cables]
    assert total == 2 * kinds.count("inter-switch") + kinds.count("host")

