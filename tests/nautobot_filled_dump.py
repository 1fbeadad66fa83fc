"""Write the filled dump of the installed Nautobot (tests/fixtures/nautobot/filled-VERSION.sql.gz):
a server started as tests/test_nautobot.py starts it, filled through its REST API as the tests
fill it, its database dumped (tests/nautobot_server.py `write_filled_dump`). The tests restore it
instead of filling while its fill key (test_nautobot.fill_key) is the current one;
tests/test_nautobot_dump.py fails when a committed one is not.

Run: python tests/nautobot_filled_dump.py [WORKDIR]   (about 3 minutes on the 2-core machine)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pynautobot  # noqa: E402

import nautobot_server  # noqa: E402
from test_nautobot import fill_all, fill_key, render_seed  # noqa: E402


def main() -> int:
    work = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="vlanroute-nautobot-filled-"))
    plan = render_seed(work / "seed")
    key = fill_key(plan, nautobot_server.nautobot_version())
    path = nautobot_server.write_filled_dump(
        work / "server", key, lambda server: print(fill_all(pynautobot.api(server.url, token=server.token), plan)))
    print(f"{path} ({path.stat().st_size} bytes, fill key {key})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
