"""Benchmark: `vlanroute draw` and `vlanroute report`, time per picture and file sizes.

Run: python bench/draw.py [--quick]
The seed torus (8 switches) and, unless --quick, the 16x16 hyper-crossbar (256 switches,
256 VLANs, 3,840 cables) with the default cap of per-VLAN pictures.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vlanroute.pictures.draw import figure_bytes, select_pictures  # noqa: E402
from vlanroute.plan.build import plan_from_file  # noqa: E402
from vlanroute.pictures.report import write_report  # noqa: E402

CASES = [("seed 4x2 torus", "inventories/seed-torus.yaml"),
         ("16x16 hyper-crossbar", "inventories/hyper-crossbar-16x16.yaml")]


def main() -> int:
    quick = "--quick" in sys.argv
    print(f"{'case':<22} {'picture':<18} {'count':>5} {'s each':>7} {'KiB each':>9}")
    for title, inv in CASES[:1] if quick else CASES:
        plan = plan_from_file(ROOT / inv)
        groups: dict[str, list[tuple[float, int]]] = {}
        for pic in select_pictures(plan).pictures:
            t0 = time.perf_counter()
            data = figure_bytes(pic.make(), "png")
            kind = "vlans/vlan-N" if pic.name.startswith("vlans/") else pic.name
            groups.setdefault(kind, []).append((time.perf_counter() - t0, len(data)))
        for kind, runs in groups.items():
            secs = sum(r[0] for r in runs) / len(runs)
            kib = sum(r[1] for r in runs) / len(runs) / 1024
            print(f"{title:<22} {kind:<18} {len(runs):>5} {secs:>7.2f} {kib:>9.0f}")
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            size = write_report(plan, Path(tmp) / "report.html")
            print(f"{title:<22} {'report.html':<18} {1:>5} {time.perf_counter() - t0:>7.2f} {size / 1024:>9.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
