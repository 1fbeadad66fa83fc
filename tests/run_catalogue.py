"""Run issue 24's catalogue of bad inputs, faults and attacks in one command and print a
table of classes with pass and fail counts.

    python tests/run_catalogue.py            # the fast tier: -m "not slow"
    python tests/run_catalogue.py --all      # slow cases too
    python tests/run_catalogue.py -- -x      # anything after -- goes to pytest

The catalogue is every test named test_catalogue_<class>_<case> (so `pytest -k catalogue`
selects the same set); <class> is the first word after `test_catalogue_`. Exit code 0 when
every case passed, 1 otherwise.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import pytest

_NAME = re.compile(r"test_catalogue_([a-z0-9]+)_")


class Tally:
    """A pytest plugin counting the outcome of each catalogue test by class."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter[str]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        found = _NAME.search(report.nodeid.rsplit("::", 1)[-1])
        if not found:
            return
        counts = self.counts.setdefault(found.group(1), Counter())
        if report.when == "call" or (report.when == "setup" and not report.passed):
            outcome = "skipped" if report.skipped else ("passed" if report.passed else "failed")
            counts[outcome] += 1


def table(counts: dict[str, Counter[str]]) -> str:
    rows = [("class", "passed", "failed", "skipped")]
    for name in sorted(counts):
        c = counts[name]
        rows.append((name, str(c["passed"]), str(c["failed"]), str(c["skipped"])))
    total = Counter[str]()
    for c in counts.values():
        total.update(c)
    rows.append(("total", str(total["passed"]), str(total["failed"]), str(total["skipped"])))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths)))
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.insert(len(lines) - 1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = [str(Path(__file__).parent), "-q", "-p", "no:cacheprovider", "-k", "catalogue", *extra]
    if "--all" not in argv:
        args += ["-m", "not slow"]
    tally = Tally()
    code = pytest.main(args, plugins=[tally])
    print()
    print(table(tally.counts))
    failed = sum(c["failed"] for c in tally.counts.values())
    return 0 if code == 0 and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
