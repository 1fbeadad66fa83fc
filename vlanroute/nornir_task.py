"""A Nornir task that pushes one switch's config from a rendered OUTDIR, through the same
safety steps as `vlanroute push` (backup, pre-flight, loop-safe order, read-back, save,
rollback on failure): `pip install "vlanroute[nornir]"`.

    from vlanroute.nornir_task import vlanroute_push
    result = nr.run(task=vlanroute_push, outdir="out", dry_run=True, known_hosts="known_hosts")

Each Nornir host is one switch of OUTDIR/plan.json: the host's name (or its data key
`vlanroute_switch`) names the switch; its `hostname` and `port` say where to reach it (a
target map, so plan.json's addresses are not used), its `username` and `password` log in.
The task's Result: `result` = the switch's record of `push --json` (docs/json.md),
`diff` = the unified diff of the managed config, `changed` when applied, `failed` when the
switch was not left as rendered or as it was (rolled back, refused, unreachable).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from vlanroute import api
from vlanroute.device.push import APPLIED, SUCCESS
from vlanroute.device.targets import TargetMap

if TYPE_CHECKING:
    from nornir.core.task import Result, Task

SSH_PORT = 22


def vlanroute_push(task: Task, outdir: str | Path, dry_run: bool = True, known_hosts: str | Path | None = None,
                   strict: bool = False) -> Result:
    from nornir.core.task import Result

    host = task.host
    switch = str(host.data.get("vlanroute_switch", host.name))
    if not host.hostname:
        raise api.UserError(f"Nornir host {host.name} has no hostname (the switch's address)")
    where = TargetMap(Path(f"<nornir host {host.name}>"), None, {switch: (str(host.hostname), int(host.port or SSH_PORT))})
    creds = api.Credentials(str(host.username or ""), password=host.password)
    run = api.push(outdir, creds, dry_run=dry_run, switches=(switch,), known_hosts=known_hosts, targets=where,
                   workers=1, strict=strict)
    [res] = run.results
    return Result(host=host, result=res.to_json(), diff="\n".join(res.diff), changed=res.result == APPLIED,
                  failed=res.result not in SUCCESS)
