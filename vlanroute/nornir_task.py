"""A Nornir task that pushes a rendered OUTDIR through the same machinery as `vlanroute push`
(backup, pre-flight, the loop-free transition, read-back, save, rollback on failure, one
journal): `pip install "vlanroute[nornir]"`.

    from vlanroute.nornir_task import vlanroute_push
    result = nr.run(task=vlanroute_push, outdir="out", dry_run=True, known_hosts="known_hosts")

Each Nornir host is one switch of OUTDIR/plan.json: the host's name (or its data key
`vlanroute_switch`) names the switch; its `hostname` and `port` say where to reach it (a
target map, so plan.json's addresses are not used), its `username` and `password` log in.

A change is loop-free only as a whole fabric, in an order: so the switches of one `nr.run`
are pushed as ONE push. The first host's task to start plans the transition over every host
of the run (the filtered inventory's hosts not marked failed) and runs its steps in their
order, as `vlanroute push --yes` does, with one journal (so `vlanroute rollback` restores
every switch it changed); every host's task waits for that push and returns its own
switch's part. Hosts of the run must share one set of credentials (a push logs in to every
switch with the same): else every task fails, saying so. `keep_going`: as push --keep-going
(after a failed switch, the steps left are planned again around it and run if loop-free).

The task's Result: `result` = the switch's record of `push --json` (docs/json.md) plus
`journal`, `diff` = the unified diff of the managed config, `changed` when applied, `failed`
when the switch was not left as rendered or as it was (rolled back, refused, unreachable, or
no loop-free transition).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlanroute import api
from vlanroute.device.push import APPLIED, SUCCESS
from vlanroute.device.targets import TargetMap

if TYPE_CHECKING:
    from nornir.core.inventory import Host
    from nornir.core.task import Result, Task

SSH_PORT = 22


@dataclass
class _FabricRun:
    """One `nr.run` of the task: the push of every host, done once by the first to start."""

    expected: set[str]
    done: threading.Event = field(default_factory=threading.Event)
    run: api.PushRun | None = None
    error: Exception | None = None
    collected: set[str] = field(default_factory=set)


_RUNS: dict[tuple[object, ...], _FabricRun] = {}
_GUARD = threading.Lock()


def _switch(host: Host) -> str:
    return str(host.data.get("vlanroute_switch", host.name))


def _push_fabric(hosts: dict[str, Host], outdir: str | Path, dry_run: bool, known_hosts: str | Path | None,
                 strict: bool, workers: int, keep_going: bool) -> api.PushRun:
    where: dict[str, tuple[str, int]] = {}
    for name, host in hosts.items():
        if not host.hostname:
            raise api.UserError(f"Nornir host {name} has no hostname (the switch's address)")
        where[_switch(host)] = (str(host.hostname), int(host.port or SSH_PORT))
    logins = {(str(h.username or ""), h.password) for h in hosts.values()}
    if len(logins) > 1:
        raise api.UserError("the Nornir hosts of this run log in with different credentials; vlanroute pushes "
                            "the fabric as one change, with one set",
                            fix="give every switch's Nornir host the same username and password (or run the "
                                "task on the hosts of one set at a time)")
    user, password = logins.pop()
    creds = api.Credentials(user, password=password)
    tmap = TargetMap(Path("<nornir inventory>"), None, where)
    return api.push(outdir, creds, dry_run=dry_run, switches=tuple(sorted(where)), known_hosts=known_hosts,
                    targets=tmap, workers=workers, strict=strict, keep_going=keep_going)


def vlanroute_push(task: Task, outdir: str | Path, dry_run: bool = True, known_hosts: str | Path | None = None,
                   strict: bool = False, workers: int = 4, keep_going: bool = False) -> Result:
    from nornir.core.task import Result

    nornir = task.nornir
    hosts = {name: h for name, h in nornir.inventory.hosts.items() if name not in nornir.data.failed_hosts}
    key = (id(nornir), str(outdir), dry_run, str(known_hosts), strict, keep_going, tuple(sorted(hosts)))
    with _GUARD:
        run = _RUNS.get(key)
        leader = run is None
        if run is None:
            run = _RUNS[key] = _FabricRun(set(hosts))
    if leader:
        try:
            run.run = _push_fabric(hosts, outdir, dry_run, known_hosts, strict, workers, keep_going)
        except Exception as exc:  # noqa: BLE001 - every host's task reports it
            run.error = exc
        finally:
            run.done.set()
    run.done.wait()
    with _GUARD:
        run.collected.add(task.host.name)
        if run.collected >= run.expected:
            _RUNS.pop(key, None)           # the next nr.run pushes again
    if run.error is not None:
        raise run.error
    assert run.run is not None
    switch = _switch(task.host)
    res = next((r for r in run.run.results if r.switch == switch), None)
    if res is None:
        raise api.UserError(f"{switch} (Nornir host {task.host.name}) was not pushed")
    record: dict[str, Any] = {**res.to_json(), "journal": run.run.journal}
    return Result(host=task.host, result=record, diff="\n".join(res.diff), changed=res.result == APPLIED,
                  failed=res.result not in SUCCESS)
