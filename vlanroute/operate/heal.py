"""How the watcher heals: strategies that turn a failure set into a bundle to push.

A strategy is one object behind one interface, listed in one table (`STRATEGIES`), as the
routing engines and switch families are. Given the published plan and the failures, it
writes a bundle (exactly what `render` writes, verified, with a manifest) and says what it
is; the watcher pushes it through the loop-free transition machinery as `vlanroute push
--yes` does, or proposes it. The policy (`operation.watch.strategies`) lists the strategies
to apply, in order, to each change of the failure set:

- `failover`: the fast failover (routing.protection: links; bundle/failedover.py): the
  hit VLANs' sources moved onto the backup VLANs planned and pre-learned at render time, a
  PVID change on their host ports and nothing else (a dead switch's neighbours also take
  its VLANs off their ports towards it: removals on dead ports), so delivery is restored
  without the hosts. Where it does not apply (the plan has no backups, nothing the backups
  can cover) it says why (`NotApplicable`) and the watcher goes on with the next strategy.
- `repair`: the minimal balanced repair of `vlanroute repair` (routing/repair/engine.py,
  bundle/repaired.py): every broken tree joined again with the fewest links, then the
  lowest load; no host changes; the hosts re-learn in the repaired VLANs (relearn.sh).
  After a failover it restores the balance (and the VLANs' own trees) in two pushes: the
  repair's trees while the hosts are still failed over (`retree_remedy`: the changed VLANs
  are idle then, so no host pair is cut), then the PVIDs back.

When no failure is left, every strategy's answer is the published plan itself (`plan_remedy`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.failures import Failures, check
from vlanroute.errors import PlanError
from vlanroute.render.repaired import write_failedover, write_repaired, write_retreed


@dataclass(frozen=True)
class HealContext:
    outdir: Path                    # the published bundle
    doc: PlanDocument               # its plan
    bundles: Path                   # where new bundles go (<state dir>/watch/bundles)


@dataclass(frozen=True)
class Remedy:
    strategy: str                   # the strategy's name, or "plan"
    bundle: Path                    # what to push (OUTDIR for the plan itself)
    summary: str                    # one line for people
    relearn: Path | None = None     # the script the hosts run to re-learn, if they must
    record: dict[str, Any] | None = None    # the strategy's own record (repair.json)

    @property
    def is_plan(self) -> bool:
        return self.strategy == "plan"


class Strategy(Protocol):
    name: str

    def remedy(self, ctx: HealContext, failures: Failures, action: str) -> Remedy:
        """A bundle for the fabric with `failures` (not empty), written under ctx.bundles;
        `action` is the watcher's id of this action (a UTC time stamp), for the folder name."""


class RepairStrategy:
    name = "repair"

    def remedy(self, ctx: HealContext, failures: Failures, action: str) -> Remedy:
        check(failures, ctx.doc, source=str(ctx.outdir / "plan.json"))
        newdir = ctx.bundles / f"{action}-repair"
        written = write_repaired(ctx.outdir, ctx.doc, failures, newdir, compare=False)
        r = written.repair.record
        summary = (f"repair around {failures.describe()}: {len(r['changes'])} VLAN tree(s) changed, "
                   f"{r['links_added']} link(s) added, switches touched: {' '.join(r['switches_touched']) or 'none'}, "
                   f"hosts lost: {len(r['hosts_lost'])}")
        return Remedy(self.name, newdir, summary, written.relearn, r)


class NotApplicable(Exception):
    """A strategy that does not apply to these failures (nothing written): the watcher logs
    why and goes on with the next one."""

    def __init__(self, strategy: str, why: str) -> None:
        super().__init__(f"{strategy}: {why}")
        self.strategy, self.why = strategy, why


class FailoverStrategy:
    name = "failover"

    def remedy(self, ctx: HealContext, failures: Failures, action: str) -> Remedy:
        check(failures, ctx.doc, source=str(ctx.outdir / "plan.json"))
        if not any(v.protects for v in ctx.doc.vlans):
            raise NotApplicable(self.name, "the plan has no backup VLANs (routing.protection: links)")
        newdir = ctx.bundles / f"{action}-failover"
        try:
            written = write_failedover(ctx.outdir, ctx.doc, failures, newdir)
        except PlanError as exc:
            raise NotApplicable(self.name, exc.message) from None
        r = written.repair.record
        moved = "; ".join(f"VLAN {m['vlan']} -> {m['backup']} ({' '.join(m['sources'])})" for m in r["failover"])
        left = (f"; not failed over: {', '.join(str(x['vlan']) for x in r['not_failed_over'])}"
                if r["not_failed_over"] else "")
        summary = (f"fast failover around {failures.describe()}: {moved}; PVIDs only, switches touched: "
                   f"{' '.join(r['switches_touched'])}{left}")
        return Remedy(self.name, newdir, summary, None, r)


STRATEGIES: dict[str, Strategy] = {"failover": FailoverStrategy(), "repair": RepairStrategy()}


def retree_remedy(ctx: HealContext, failures: Failures, action: str) -> Remedy:
    """Between a pushed failover and its repair: the repair's trees with the failover's
    PVIDs (render/repaired.py write_retreed), so that neither push cuts a host pair."""
    newdir = ctx.bundles / f"{action}-retree"
    written = write_retreed(ctx.outdir, ctx.doc, failures, newdir)
    r = written.repair.record
    summary = (f"the repair's trees around {failures.describe()} with the hosts still failed over: "
               f"{len(r['changes'])} idle VLAN tree(s) changed")
    return Remedy("retree", newdir, summary, written.relearn, r)


def plan_remedy(ctx: HealContext, relearn: Path | None = None) -> Remedy:
    """Back to the published plan: OUTDIR itself. `relearn`: the script of the repair being
    left (the hosts re-learn in the same VLANs on their way back)."""
    return Remedy("plan", ctx.outdir, "the published plan", relearn)
