"""Where the test suite's time goes, from one run's `--durations=0` output.

    python -m pytest -q -p no:cacheprovider --durations=0 > run.log     # the whole suite
    python -m pytest --collect-only -q -n 0 > ids.txt                   # collection order
    python bench/suite_time.py run.log ids.txt [--top 30]

Prints the total work (the sum of every test's set-up, call and teardown), the files that
carry most of it, the lower bound of the wall time on `--workers` workers (pyproject.toml's
four; the longer of the total work over the workers and the longest test), and the wall time pytest-xdist's `--dist worksteal` gives
with tests/conftest.py's longest-first order (simulated over the measured durations). When
the simulated time is at the bound, the order cannot gain anything: only less work can.

The simulation follows xdist's WorkStealingScheduling: the ordered items are split in two,
a worker with fewer than 2 pending items takes the last half of the longest queue (less the 2
its owner keeps). It ignores that a test may use more than its one core (the QEMU VM's two
vCPUs and its I/O thread), so it is a model of the order, not of the machine.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

DURATION = re.compile(r"^\s*([\d.]+)s (call|setup|teardown)\s+(\S.*)$")
# The figure tests/conftest.py gives a test that tests/slow_tests.txt does not list, by marker.
KIND_SECONDS = (("vm", 120.0), ("pip_install", 90.0), ("browser", 30.0), ("slow", 10.0))
MIN_PENDING = 2          # xdist's worksteal: a worker keeps this many queued tests


def durations(log: str) -> dict[str, float]:
    """Node id -> seconds of set-up, call and teardown, from pytest's --durations output."""
    out: dict[str, float] = {}
    for line in log.splitlines():
        m = DURATION.match(line)
        if m:
            out[m.group(3)] = out.get(m.group(3), 0.0) + float(m.group(1))
    return out


def longest_first(ids: Sequence[str], expected: dict[str, float], workers: int = 2) -> list[str]:
    """tests/conftest.py's order (longest_first), on node ids and expected seconds."""
    items = list(ids)
    rank = sorted(range(len(items)), key=lambda i: -expected.get(items[i], 0.0))
    share = len(items) // workers
    others = rank[1:1 + len(items) - share]
    first = sorted(set(range(len(items))) - set(others))
    first.remove(rank[0])
    return [items[rank[0]]] + [items[i] for i in first] + [items[i] for i in others]


def worksteal(order: Sequence[str], seconds: dict[str, float],
              workers: int = 2) -> tuple[list[float], list[list[str]]]:
    """When each worker ends, running `order` with xdist's work stealing, and what each ran."""
    share = len(order) // workers
    queues = [list(order[w * share:(w + 1) * share if w < workers - 1 else len(order)]) for w in range(workers)]
    ends = [0.0] * workers
    ran: list[list[str]] = [[] for _ in range(workers)]
    finish: list[float | None] = [seconds.get(q[0], 0.0) if q else None for q in queues]
    while any(f is not None for f in finish):
        w = min((k for k in range(workers) if finish[k] is not None), key=lambda k: finish[k] or 0.0)
        now = finish[w] or 0.0
        ran[w].append(queues[w].pop(0))
        ends[w] = now
        finish[w] = None
        for idle in range(workers):
            if len(queues[idle]) < MIN_PENDING:
                victim = max(range(workers), key=lambda k: len(queues[k]))
                n = min(len(queues[victim]) // 2, max(0, len(queues[victim]) - MIN_PENDING))
                if n and victim != idle:
                    queues[idle].extend(queues[victim][-n:])
                    del queues[victim][-n:]
        for k in range(workers):
            if finish[k] is None and queues[k]:
                finish[k] = now + seconds.get(queues[k][0], 0.0)
    return ends, ran


def expected_seconds(ids: Sequence[str], listed: dict[str, float], kinds: dict[str, set[str]]) -> dict[str, float]:
    out = {}
    for i in ids:
        if i in listed:
            out[i] = listed[i]
        else:
            out[i] = next((s for kind, s in KIND_SECONDS if i in kinds.get(kind, set())), 0.0)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", type=Path, help="a pytest run's output with --durations=0")
    ap.add_argument("ids", type=Path, help="`pytest --collect-only -q -n 0` output (the collection order)")
    ap.add_argument("--slow-list", type=Path, default=Path(__file__).resolve().parent.parent / "tests" / "slow_tests.txt")
    ap.add_argument("--marked", nargs="*", default=[], metavar="KIND=FILE",
                    help="node ids carrying a marker (vm, pip_install, browser, slow), one file per kind, "
                         "from `pytest --collect-only -q -n 0 -m KIND`; without them unlisted tests count 0 s "
                         "in the order")
    ap.add_argument("--top", type=int, default=25, help="files to show")
    ap.add_argument("--workers", type=int, default=4, help="pytest-xdist workers (pyproject.toml's -n)")
    args = ap.parse_args(argv)

    seconds = durations(args.log.read_text())
    ids = [line.strip() for line in args.ids.read_text().splitlines() if "::" in line]
    kinds = {}
    for spec in args.marked:
        kind, _, path = spec.partition("=")
        kinds[kind] = {line.strip() for line in Path(path).read_text().splitlines() if "::" in line}
    from conftest import slow_list      # the figures tests/conftest.py orders the suite by
    import conftest
    conftest.SLOW_LIST = args.slow_list
    listed = slow_list()

    total = sum(seconds.get(i, 0.0) for i in ids)
    longest = max(ids, key=lambda i: seconds.get(i, 0.0))
    by_file: dict[str, float] = {}
    for i in ids:
        by_file[i.split("::")[0]] = by_file.get(i.split("::")[0], 0.0) + seconds.get(i, 0.0)
    print(f"{len(ids)} tests, {sum(1 for i in ids if i in seconds)} with a measured duration; "
          f"total work {total:.0f} s")
    print(f"{'seconds':>8} {'share':>6}  file")
    for f, s in sorted(by_file.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"{s:8.1f} {s / total:6.1%}  {f}")
    bound = max(total / args.workers, seconds.get(longest, 0.0))
    ends, _ = worksteal(longest_first(ids, expected_seconds(ids, listed, kinds), args.workers), seconds,
                        args.workers)
    print(f"\nlongest test: {seconds.get(longest, 0.0):.0f} s ({longest})")
    print(f"{args.workers} workers: bound {bound:.0f} s (max of the work per worker and the longest test); "
          f"worksteal in conftest's order {max(ends):.0f} s (workers end at "
          + " / ".join(f"{e:.0f}" for e in ends) + ")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
