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



def test_sheet_lists_switches_in_natural_order(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # sw2 before sw10: the sheet once listed sw1, sw10, sw11, sw12, sw2, ...
    from vlanroute.plan.build import plan_from_file
    inv = tmp_path / "ring12.yaml"
    inv.write_text("name: ring12\nplatform: powerconnect-6248\ntopology: {kind: ring, size: 12}\n"
                   "hosts: {count: 12}\n")
    page = _Tables()
    page.feed(render_files(plan_from_file(inv).to_document())["cabling.html"])
    assert list(page.sections) == [f"sw{i}" for i in range(1, 13)]


def test_verify_checks_host_rows_and_labels(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from vlanroute.render.write import render_to_dir
    from vlanroute.verify.configs import verify_outdir

    out = tmp_path / "out"
    render_to_dir(document(ring3_plan("powerconnect-6248")), out)
    assert verify_outdir(out).ok
    lines = (out / "cabling.csv").read_text().splitlines()
    edited = list(lines)
    host_row = next(i for i, line in enumerate(edited) if ",node001,eth0," in line)
    edited[host_row] = edited[host_row].replace("sw1,1/g1,", "sw1,1/g9,")      # host moved
    edited[1] = edited[1].rsplit(",", 1)[0] + ",AAAA-AAAA"                    # relabelled
    del edited[-1]                                                             # a host row lost
    (out / "cabling.csv").write_text("\n".join(edited) + "\n")
    report = verify_outdir(out)
    assert not report.ok
    text = "\n".join(report.violations)
    assert f"cabling.csv line {host_row + 1}: host node001 is on sw1 1/g9 eth0, plan.json has sw1 1/g1 eth0" in text
    assert "cabling.csv line 2: cable sw1 1/g21 - sw2 1/g21 is labelled AAAA-AAAA, its label is" in text
    assert "cabling.csv: the cable of host node006 (sw3 1/g2) is missing" in text
    # The 6-column file of an older render is still accepted.
    (out / "cabling.csv").write_text("\n".join(",".join(line.split(",")[:6]) for line in lines
                                               if ",host," not in line) + "\n")
    assert verify_outdir(out).ok
