"""Push a rendered OUTDIR with Nornir, one vlanroute_push task per switch.

    python examples/nornir_push.py OUTDIR KNOWN_HOSTS TARGETS_JSON [--apply]

TARGETS_JSON is a target map as `vlanroute lab up` writes it (switch -> host, port), so
this runs against the emulated switches of `vlanroute lab up OUTDIR`; credentials from
VLANROUTE_SSH_USER / VLANROUTE_SSH_PASSWORD. A real site would build the Nornir inventory
from its own source (SimpleInventory files, NetBox, ...) the same way.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from nornir.core import Nornir
from nornir.core.inventory import Defaults, Groups, Host, Hosts, Inventory
from nornir.plugins.runners import ThreadedRunner

from vlanroute.natural import natural_key
from vlanroute.nornir_task import vlanroute_push


def nornir_for(targets: dict[str, dict[str, object]], username: str, password: str) -> Nornir:
    hosts = Hosts({name: Host(name, hostname=str(t["host"]), port=int(str(t["port"])), username=username,
                              password=password, platform="dell_powerconnect")
                   for name, t in targets.items()})
    return Nornir(inventory=Inventory(hosts=hosts, groups=Groups(), defaults=Defaults()),
                  runner=ThreadedRunner(num_workers=4))


def main(argv: list[str]) -> int:
    outdir, known_hosts, targets_file = Path(argv[0]), Path(argv[1]), Path(argv[2])
    apply = "--apply" in argv
    targets = json.loads(targets_file.read_text())["switches"]
    nr = nornir_for(targets, os.environ["VLANROUTE_SSH_USER"], os.environ["VLANROUTE_SSH_PASSWORD"])
    results = nr.run(task=vlanroute_push, outdir=outdir, dry_run=not apply, known_hosts=known_hosts)
    for name, multi in sorted(results.items(), key=lambda item: natural_key(item[0])):   # sw2 before sw10
        r = multi[0]
        print(f"{name}: {r.result['result']}: {r.result['message']}")
    return 1 if results.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
