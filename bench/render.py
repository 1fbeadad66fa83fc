"""Time rendering the 16x16 hyper-crossbar against writing the same bytes.

    python bench/render.py [INVENTORY] [--repeat N]

Measures, best of N:
  render  = render_files(plan document) + writing the tree (what `vlanroute render` does
            besides planning and verifying);
  write   = writing the identical files from memory;
and prints both and their ratio. Planning and verification are timed once, for scale.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))          # measure this checkout, not an installed vlanroute

from vlanroute.plan.build import plan_from_file  # noqa: E402
from vlanroute.render.write import _write_tree, environment, render_files  # noqa: E402


def best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("inventory", nargs="?", default=str(ROOT / "inventories" / "hyper-crossbar-16x16.yaml"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    t0 = time.perf_counter()
    plan = plan_from_file(args.inventory)
    t_plan = time.perf_counter() - t0
    t0 = time.perf_counter()
    doc = plan.to_document()
    t_doc = time.perf_counter() - t0
    env = environment()
    render_files(doc, env=env)                        # warm the template cache
    files = render_files(doc, env=env)
    total = sum(len(t.encode()) for t in files.values())

    scratch = Path(tempfile.mkdtemp(prefix="vlanroute-bench-"))
    try:
        n = 0

        def target() -> Path:
            nonlocal n
            n += 1
            return scratch / f"t{n}"

        t_render = best(lambda: _write_tree(target(), render_files(doc, env=env)), args.repeat)
        t_write = best(lambda: _write_tree(target(), files), args.repeat)
        t_gen = best(lambda: render_files(doc, env=env), args.repeat)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print(f"inventory      {Path(args.inventory).name}: {len(doc.switches)} switches, "
          f"{len(doc.hosts)} hosts, {len(doc.vlans)} VLANs")
    print(f"output         {len(files)} files, {total / 1e6:.1f} MB")
    print(f"plan (once)    {t_plan:8.2f} s")
    print(f"document (once){t_doc:8.2f} s  (Plan.to_document: the JSON object, validated)")
    print(f"render only    {t_gen:8.3f} s  (templates, in memory)")
    print(f"render+write   {t_render:8.3f} s")
    print(f"write only     {t_write:8.3f} s")
    print(f"ratio          {t_render / t_write:8.2f}  (render+write / write of the same bytes)")


if __name__ == "__main__":
    main()
