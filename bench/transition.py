"""Benchmark: planning a loop-free transition (vlanroute.transition), without switches.

Run: python bench/transition.py [--quick]      (--quick: the seed torus only)

For each fabric and change, the running configs are what the "from" bundle renders (or the
factory state), the change is push's own (device/push.prepare per switch: the rendered file
and its fix-ups), and the transition is planned as push plans it (device/change.py): the
programs (the family's reader on every prefix that can change a cable end), the search,
the proof of every state, the waves and the cuts. CPU seconds, one run each.
"""

from __future__ import annotations

import os
from pathlib import Path
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    os.environ["VLANROUTE_LOOPBACK_ONLY"] = "1"
    sys.path.insert(0, str(ROOT))
    from vlanroute.bundle.reader import read_plan
    from vlanroute.bundle.repaired import repair_document
    from vlanroute.bundle.failures import parse_failures
    from vlanroute.device.change import fabric_of, push_change, start_views
    from vlanroute.device.push import SwitchResult, prepare
    from vlanroute.device.targets import TargetMap, select_targets
    from vlanroute.plan.build import plan_from_file
    from vlanroute.render.write import RenderOptions, render_to_dir
    from vlanroute.transition.planner import plan

    quick = "--quick" in sys.argv
    fabrics = [("seed torus 4x2, 225 hosts", ROOT / "inventories" / "seed-torus.yaml", ())]
    if not quick:
        fabrics += [("torus 8x8, 4 hosts/switch", ROOT / "inventories" / "seed-torus.yaml",
                     ("topology.dims=[8,8]", "hosts.count=null", "hosts.per_switch=4", "topology.links_per_pair=1")),
                    ("torus 16x16, 2 hosts/switch", ROOT / "inventories" / "seed-torus.yaml",
                     ("topology.dims=[16,16]", "hosts.count=null", "hosts.per_switch=2", "topology.links_per_pair=1",
                      "platform=powerconnect-8132"))]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, inventory, sets in fabrics:
            a = Path(tmp) / f"{len(rows)}-dor"
            b = Path(tmp) / f"{len(rows)}-turns"
            r = Path(tmp) / f"{len(rows)}-rep"
            render_to_dir(plan_from_file(str(inventory), [*sets, "routing.algorithm=dor"]).to_document(), a,
                          RenderOptions(verify=False))
            render_to_dir(plan_from_file(str(inventory), [*sets, "routing.algorithm=turns"]).to_document(), b,
                          RenderOptions(verify=False))
            doc_a = read_plan(a)
            rep = repair_document(doc_a, parse_failures([], ["sw1:sw2"], [], fields={}, file="bench"))
            render_to_dir(rep.doc, r, RenderOptions(verify=False))
            for change, start_dir, target_dir in (("factory -> dor", None, a), ("dor -> turns", a, b),
                                                  ("dor -> repair", a, r), ("repair -> dor", r, a)):
                doc = read_plan(target_dir)
                targets = {t.name: t for t in select_targets(target_dir, doc, (), action="push", dry_run=True,
                                                             target_map=TargetMap(Path("-"), None, {
                                                                 s: ("127.0.0.1", 22) for s in doc.switches})).targets}
                t0 = time.process_time()
                results: dict[str, SwitchResult] = {}
                for name, t in targets.items():
                    text = "" if start_dir is None else (start_dir / "switches" / f"{name}.cfg").read_text()
                    prep = prepare(t, text)
                    results[name] = SwitchResult(name, "dry-run", diff=prep.diff, prep=prep, final_text=text)
                fabric = fabric_of(doc, None, target_dir)
                start, _ = start_views(fabric, results, targets)
                ch = push_change(fabric, targets, results, None, False)
                programs = ch.programs()
                t1 = time.process_time()
                tr = plan(fabric, start, programs, ch.split, list(doc.switches), workers=8)
                t2 = time.process_time()
                rows.append((label, change, len(tr.steps), len(set(tr.waves)), len(tr.split),
                             sum(p.states for p in tr.proofs), sum(c.count for c in tr.cuts), t1 - t0, t2 - t1))
                print(f"  {label}: {change} done", file=sys.stderr, flush=True)
    head = ("fabric", "change", "steps", "waves", "split", "states", "pairs cut", "programs s", "plan s")
    print(" | ".join(head))
    print(" | ".join("---" for _ in head))
    for row in rows:
        print(" | ".join(f"{x:.2f}" if isinstance(x, float) else str(x) for x in row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
