"""The Python API: what the CLI does, as typed functions that return the objects it prints.

    from vlanroute import api
    plan = api.plan("inventories/seed-ring.yaml")
    rendered = api.render(plan, "out")
    assert api.verify("out").ok
    run = api.push("out", credentials, dry_run=True)
    report = api.audit("out", credentials)

Every function raises `vlanroute.errors.UserError` for a mistake in its input (with the
file, field and fix) and never prints; the commands in vlanroute/commands/ are thin layers
that print these objects as text or JSON (docs/json.md). Nothing here reads a terminal:
credentials are passed in (`Credentials(username, password=...)` or `credentials_from_env()`).
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from vlanroute.bundle.document import PlanDocument
from vlanroute.device.audit import AuditReport, require_something_to_check, run_audit
from vlanroute.device.cablecheck import readable, run_check
from vlanroute.device.cabling import CablingReport, CableStatus, unchecked_refusal
from vlanroute.device.credentials import Credentials, load_credentials
from vlanroute.bundle.reader import PLAN_FILE, read_plan
from vlanroute.bundle.manifest import require_intact
from vlanroute.device.bundlegate import check_bundle, read_bundle
from vlanroute.device import pushflow
from vlanroute.device.change import observers
from vlanroute.device.repairpush import down_cables
from vlanroute.device.journal import sha256_text
from vlanroute.device.push import (CHANGED, NOT_STARTED, PARTLY_APPLIED, ROLLBACK_FAILED, SAVE_UNCERTAIN, SUCCESS, UNCHANGED,
                                   PushOptions, PushUI, Pusher, SwitchResult)
from vlanroute.device.resume import resume_selection
from vlanroute.device.statedir import FabricState, lock_fabric
from vlanroute.device.session import HostKeyPolicy
from vlanroute.device.targets import (TARGETS_ENV, Target, TargetMap, check_loopback, read_target_map,
                                      select_targets)
from vlanroute.errors import UserError
from vlanroute.exitcodes import ExitCode
from vlanroute.model.inventory import LoadedInventory, load_inventory
from vlanroute.plan.build import Plan, build_plan
from vlanroute.render.exact import check_exact
from vlanroute.render.write import (RenderOptions, RenderResult, advice_warnings, platforms_of, render_to_dir,
                                   syntax_warnings)
from vlanroute.transition.planner import Transition
from vlanroute.verify.configs import VerifyReport, verify_outdir

__all__ = ["AuditReport", "CablingRefused", "CablingReport", "Credentials", "ExitCode", "HostKeyPolicy", "LoadedInventory", "Plan", "PushRun",
           "RenderResult", "StrictRefused", "SwitchResult", "Targets", "UserError", "VerifyReport", "audit", "cabling",
           "credentials_from_env", "load", "plan", "push", "push_exit_code", "render", "select", "verify"]


class CablingRefused(UserError):
    """push: an inter-switch cable disagrees with cabling.csv; nothing was changed. `report`
    says which cables and how to fix them (`vlanroute cabling check`)."""

    def __init__(self, report: CablingReport) -> None:
        self.report = report
        wrong = [f"{c.a} {c.a_port} - {c.b} {c.b_port}: {c.status}" for c in report.inter_switch_problems()]
        wrong += [f"unexpected: {' - '.join(u.ends)}" for u in report.unexpected_inter_switch()]
        super().__init__(f"push refused before any change: {len(wrong)} inter-switch cable(s) disagree "
                         f"with cabling.csv: {'; '.join(wrong)}", exit_code=int(ExitCode.FAILED_CHECK),
                         fix="; ".join(report.fixes) or "fix the cabling (vlanroute cabling check)")


class StrictRefused(UserError):
    """`strict=True` and the plan or the render has warnings: nothing was written."""

    def __init__(self, warnings: list[str], what: str) -> None:
        self.warnings = warnings
        super().__init__(f"--strict: {len(warnings)} warning(s); {what}", exit_code=int(ExitCode.FAILED_CHECK),
                         fix="fix what the warnings say, or drop --strict to accept them")


def load(inventory: str | Path, sets: tuple[str, ...] | list[str] = ()) -> LoadedInventory:
    """Read and validate an inventory (with `--set`-style overrides), hosts CSV included."""
    return load_inventory(inventory, sets)


def plan(inventory: str | Path | LoadedInventory, sets: tuple[str, ...] | list[str] = (),
         strict: bool = False) -> Plan:
    """The verified plan of an inventory (`vlanroute plan`). `plan.warnings` lists what the
    CLI prints as warnings; `strict` raises StrictRefused when there are any."""
    inv = inventory if isinstance(inventory, LoadedInventory) else load(inventory, sets)
    result = build_plan(inv)
    if strict and result.warnings:
        raise StrictRefused(list(result.warnings), "the plan has warnings")
    return result


def render_warnings(doc: PlanDocument) -> list[str]:
    """The warnings a render of `doc` gives whatever happens: unconfirmed syntax per family,
    and what a family's vendor advises for the switches' VLAN counts."""
    by_switch = platforms_of(doc)
    return syntax_warnings(doc, by_switch) + advice_warnings(doc, by_switch)


def render(source: str | Path | LoadedInventory | Plan | PlanDocument, outdir: str | Path, *,
           sets: tuple[str, ...] = (), learning_method: str | None = None, host_network: str | None = None,
           per_host_scripts: bool = False, verify: bool = True, strict: bool = False, force: bool = False,
           plan_warnings: list[str] | None = None) -> RenderResult:
    """Render, verify and publish OUTDIR atomically (`vlanroute render`). The result's
    `warnings` are the plan's and the render's, as the CLI prints them. `strict`: refuse
    (StrictRefused, OUTDIR untouched) when there would be any. `force`: replace an OUTDIR
    that holds files no render wrote. A `PlanDocument` source (`plan.to_document()`, so the
    planner's state can be freed first) takes the plan's warnings as `plan_warnings`."""
    if isinstance(source, PlanDocument):
        doc, warned = source, list(plan_warnings or [])
    else:
        the_plan = source if isinstance(source, Plan) else plan(source, sets)
        doc, warned = the_plan.to_document(), list(the_plan.warnings)
        del the_plan
    if strict:
        found = warned + render_warnings(doc)
        if found:
            raise StrictRefused(found, f"{outdir} not written")
    result = render_to_dir(doc, Path(outdir), RenderOptions(learning_method=learning_method, host_network=host_network,
                                                            per_host_scripts=per_host_scripts, verify=verify,
                                                            force=force))
    extra = [] if verify else ["--no-verify: the rendered configs were NOT verified"]
    return replace(result, warnings=warned + list(result.warnings) + extra)


def verify(outdir: str | Path) -> VerifyReport:
    """Parse OUTDIR's configs back and simulate them (`vlanroute verify`); `.ok`, `.violations`.
    Every file must also be exactly what render writes for OUTDIR/plan.json (violations of
    kind "bundle": each foreign or missing line, vlanroute.render.exact)."""
    exact = check_exact(Path(outdir))
    try:
        report = verify_outdir(Path(outdir))
    except UserError as exc:
        if not exact.ok:        # a file the parsers refuse: the lines that differ say why
            exc.message += ("\n  the bundle also differs from what render writes for plan.json:\n    "
                            + "\n    ".join(exact.problems[:10]))
        raise
    if exact.problems:
        report.ok = False
        report.counts["bundle"] = len(exact.problems)
        # The first few differing lines lead, then what they break (shown first by the CLI),
        # then the other differing lines: neither kind hides the other.
        report.violations = exact.problems[:4] + report.violations + exact.problems[4:]
    report.summary.append(f"{exact.files_checked} files rendered again from plan.json and compared line by line"
                          + ("" if exact.ok else f": {len(exact.problems)} differences"))
    return report


def credentials_from_env() -> Credentials:
    """VLANROUTE_SSH_USER with VLANROUTE_SSH_PASSWORD or VLANROUTE_SSH_KEY; never prompts."""
    return load_credentials(interactive=False)


@dataclass
class PushRun:
    """What `vlanroute push` prints: one SwitchResult per switch, and the exit code; the
    transition planned (None when nothing was planned: a pre-flight failed)."""
    outdir: Path
    dry_run: bool
    results: list[SwitchResult]
    notes: list[str] = field(default_factory=list)
    transition: Transition | None = None
    journal: str | None = None

    @property
    def exit_code(self) -> ExitCode:
        return push_exit_code(self.results)

    @property
    def counts(self) -> dict[str, int]:
        return dict(sorted(Counter(r.result for r in self.results).items()))

    def to_json(self) -> dict[str, object]:
        from vlanroute.transition.report import to_json as transition_json
        out: dict[str, object] = {
            "outdir": str(self.outdir), "dry_run": self.dry_run, "exit_code": int(self.exit_code),
            "counts": self.counts, "switches": [r.to_json() for r in self.results], "not_pushed": []}
        if self.transition is not None:
            out["transition"] = transition_json(self.transition)
        return out


def push_exit_code(results: list[SwitchResult], interrupted: bool = False) -> ExitCode:
    """docs/exit-codes.md: 4 a rollback failed; 130 interrupted (Ctrl-C); 3 some switches
    changed and others did not, or a save is uncertain; 1 nothing changed and a switch
    failed; 0 every switch succeeded."""
    if any(r.result == ROLLBACK_FAILED for r in results):
        return ExitCode.ROLLBACK_FAILED
    if interrupted:
        return ExitCode.INTERRUPTED
    failed = any(r.result not in SUCCESS for r in results)
    changed = any(r.result in CHANGED for r in results)
    if any(r.result in (SAVE_UNCERTAIN, PARTLY_APPLIED) for r in results) or (failed and changed):
        return ExitCode.PARTIAL
    return ExitCode.FAILED_CHECK if failed else ExitCode.OK


@dataclass(frozen=True)
class Targets:
    """The switches a push or audit talks to, checked before any connection or credential."""
    doc: PlanDocument
    targets: list[Target]
    notes: list[str]


def _from_environment(targets: str | Path | TargetMap | None) -> str | Path | TargetMap | None:
    """`targets`, else VLANROUTE_TARGETS as the CLI reads it (`eval "$(vlanroute lab up OUTDIR)"`
    sets it): a script run in the same shell reaches the same switches as the commands."""
    if targets is not None:
        return targets
    return os.environ.get(TARGETS_ENV) or None


def select(outdir: str | Path, action: Literal["push", "audit"] = "push", *, switches: tuple[str, ...] | list[str] = (),
           dry_run: bool = False, targets: str | Path | TargetMap | None = None) -> Targets:
    """Read OUTDIR/plan.json and choose the switches (all, or `switches`), reached at
    plan.json's addresses or a target map's; refuses families that cannot do `action` and,
    while tests run, any address off loopback."""
    from vlanroute.bundle.reader import read_plan
    out = Path(outdir)
    doc = read_plan(out)
    targets = _from_environment(targets)
    tmap = read_target_map(Path(targets)) if isinstance(targets, (str, Path)) else targets
    selection = select_targets(out, doc, tuple(switches), action=action, dry_run=dry_run, target_map=tmap)
    check_loopback(selection.targets)          # before any connection
    return Targets(doc, list(selection.targets), list(selection.notes))


def push(outdir: str | Path, credentials: Credentials, *, dry_run: bool = True,
         switches: tuple[str, ...] | list[str] = (), known_hosts: str | Path | None = None,
         insecure_no_host_key_check: bool = False, ssh_config: str | Path | None = None,
         ssh_agent: bool = False, targets: str | Path | TargetMap | None = None,
         workers: int = 4, keep_going: bool = False, strict: bool = False, save: bool = True,
         state_dir: str | Path | None = None, expected: dict[str, list[str]] | None = None,
         check_cabling: bool = True, ui: PushUI | None = None, selected: Targets | None = None,
         check_manifest: bool = True, resume: bool = False) -> PushRun:
    """Push OUTDIR's configs as `vlanroute push --yes` does: first every switch is logged in
    to, backed up (in the state directory, docs/push.md) and checked, changing nothing; if
    any fails there, nothing is changed anywhere. Then the switches are changed in the
    loop-safe order, read back, saved (unless `save=False`; `vlanroute save` commits later),
    a failed switch rolled back, with a push journal for `vlanroute rollback`.
    `dry_run=True` (the default) stops after the first pass and fills each result's `diff`
    and `commands`. There is no confirmation step: `dry_run=False` is the confirmation.
    `expected` (switch -> the `running_canonical` of an earlier dry run): only those switches
    are pushed, and one whose running config moved since is not touched.
    First of all, as the command does, the cabling check (`cabling`): an inter-switch cable
    that disagrees with cabling.csv raises CablingRefused before any change (a dry run
    goes on), and cables that neither end's LLDP table showed raise UserError once every
    switch passed the pre-flight; `check_cabling=False` skips it. Unless `dry_run`, the
    fabric's lock is held throughout (docs/push.md, the state directory): another push,
    save or rollback of the same fabric at work raises UserError, changing nothing. Before everything, as the command
    does, OUTDIR must match its manifest.json (`check_manifest=False`: `--skip-manifest-check`).
    `resume=True` is `push --resume`: the last push's journal names the switches it did not
    finish; only those are pushed (both passes), appended to the same journal, and those it
    applied but did not finish saving are saved; refused if plan.json changed since. When the
    last push finished every switch, nothing is done (`results` empty, a note says so)."""
    out = Path(outdir)
    if check_manifest:
        require_intact(out, "push", "check_manifest=False")
    # Read once, exactly what render writes, verified (device.bundlegate); sent from memory.
    bundle = read_bundle(out)
    check_bundle(bundle, "push", exact=check_manifest, override="check_manifest=False")
    down_cables(out)            # a repaired bundle's repair.json, checked before anything connects
    sel = selected or select(out, "push", switches=switches, dry_run=dry_run, targets=targets)
    tmap = targets if isinstance(targets, TargetMap) else read_target_map(Path(targets)) if targets else None
    configs = bundle.configs([t.name for t in sel.targets])
    unchecked: list[CableStatus] = []
    if check_cabling:
        report = cabling(out, credentials, switches=switches, known_hosts=known_hosts,
                         insecure_no_host_key_check=insecure_no_host_key_check, ssh_config=ssh_config,
                         ssh_agent=ssh_agent, targets=targets, workers=workers)
        if (report.inter_switch_problems() or report.unexpected_inter_switch()) and not dry_run:
            raise CablingRefused(report)
        unchecked = report.unchecked_inter_switch({t.name for t in sel.targets})
    policy = _ssh_policy(insecure_no_host_key_check, known_hosts, ssh_config, ssh_agent)
    state = FabricState.choose(Path(state_dir) if state_dir else None, sel.doc.name, out)
    state.ensure()
    # The plan's other switches, read only: a change is loop-free only with what they run.
    chosen = [t for t in sel.targets if expected is None or t.name in expected]
    others, unreadable = observers(out, sel.doc, chosen, tmap)
    check_loopback(others)
    # One push, save or rollback per fabric at a time (statedir.lock_fabric); a dry run changes nothing.
    with contextlib.nullcontext() if dry_run else lock_fabric(state, "push"):
        plan_sha = sha256_text(bundle.snapshot.text(PLAN_FILE))
        journal = None
        resave: frozenset[str] = frozenset()
        if resume:      # under the lock: the journal read is the one continued
            journal, chosen, resave = resume_selection(state, out, sel.doc.name, chosen, plan_sha)
            resave = resave if save else frozenset()
            if not chosen:
                return PushRun(out, dry_run, [], [*sel.notes, "the last push finished every switch; nothing to do"])
            others, unreadable = observers(out, sel.doc, chosen, tmap)
            check_loopback(others)
        preview_options = PushOptions(dry_run=True, workers=workers, keep_going=True, host_keys=policy, strict=strict,
                                      save=save)
        pusher = Pusher(out, state, credentials, preview_options, ui or PushUI(), configs=configs)
        view = pushflow.preview(pusher, out, sel.doc, state, chosen, others, unreadable, configs, strict, workers)
        for r in view.results:
            if expected is not None and r.result in SUCCESS and r.running_canonical != expected[r.switch]:
                r.result = NOT_STARTED
                r.message = "not changed: the running config changed since the diff was shown; run push again"
        failed = view.failed
        if not resume:
            # Switches the last push left unfinished (not saved): found as rendered, saved now.
            _last, pending = pushflow.left_unfinished(state, sel.doc.name)
            resave = frozenset(n for n in pending if n in {t.name for t in chosen}) if save else frozenset()
        # Also saved: what an interrupted push applied but did not save (resumed or not).
        to_save = [r for r in view.results if not r.diff and r.switch in resave and r.result == UNCHANGED]
        for r in to_save:
            r.message = "left unfinished by the last push, NOT saved: this push saves it"
        if dry_run or failed or not (view.changing or to_save):
            return PushRun(out, dry_run, view.results, sel.notes, view.transition)
        if view.refused is not None:
            raise view.refused
        if unchecked:       # every switch logged in, yet these cables were never seen
            raise UserError(unchecked_refusal(unchecked), exit_code=int(ExitCode.FAILED_CHECK))
        bundle.require_unchanged("push")
        header = {"outdir": str(out.resolve()), "plan": sel.doc.name, "plan_sha256": plan_sha, "save": save,
                  "switches": [r.switch for r in [*view.changing, *to_save]]}
        options = PushOptions(workers=workers, keep_going=keep_going, host_keys=policy, strict=strict, save=save,
                              resave=resave)
        runner = Pusher(out, state, credentials, replace(options, keep_going=False), ui or PushUI(), configs=configs)
        outcome = pushflow.execute(view, runner, state, journal, header, options, to_save)
        return PushRun(out, dry_run, outcome.results, sel.notes, view.transition, str(outcome.journal.path))


def _ssh_policy(insecure: bool, known_hosts: str | Path | None, ssh_config: str | Path | None,
                ssh_agent: bool) -> HostKeyPolicy:
    """How to connect: host keys, and the site's ssh_config and ssh-agent (netmiko's)."""
    return HostKeyPolicy(check=not insecure, known_hosts=Path(known_hosts) if known_hosts else None,
                         allow_agent=ssh_agent, ssh_config_file=Path(ssh_config) if ssh_config else None)


def cabling(outdir: str | Path, credentials: Credentials, *, switches: tuple[str, ...] | list[str] = (),
            known_hosts: str | Path | None = None, insecure_no_host_key_check: bool = False,
            ssh_config: str | Path | None = None, ssh_agent: bool = False,
            targets: str | Path | TargetMap | None = None, workers: int = 4) -> CablingReport:
    """Read the switches' LLDP tables and compare them with OUTDIR/cabling.csv (`vlanroute
    cabling check`); `report.ok`, each cable's `status` and the technician's `fixes`."""
    out = Path(outdir)
    doc = read_plan(out)
    targets = _from_environment(targets)
    tm = targets if isinstance(targets, TargetMap) else read_target_map(Path(targets)) if targets else None
    chosen, skipped = readable(out, doc, tuple(switches), tm)
    policy = _ssh_policy(insecure_no_host_key_check, known_hosts, ssh_config, ssh_agent)
    return run_check(out, doc, chosen, skipped, credentials, policy, workers)


def audit(outdir: str | Path, credentials: Credentials, *, switches: tuple[str, ...] | list[str] = (),
          known_hosts: str | Path | None = None, insecure_no_host_key_check: bool = False,
          ssh_config: str | Path | None = None, ssh_agent: bool = False,
          targets: str | Path | TargetMap | None = None, workers: int = 4,
          on_done: Callable[[str, bool], None] | None = None, selected: Targets | None = None) -> AuditReport:
    """Compare the switches' learned-MAC tables with the plan (`vlanroute audit`); the
    report's `findings` and `errors` are empty when everything is where the plan says."""
    policy = _ssh_policy(insecure_no_host_key_check, known_hosts, ssh_config, ssh_agent)
    sel = selected or select(outdir, "audit", switches=switches, targets=targets)
    require_something_to_check(sel.doc, sel.targets, Path(outdir))    # as the CLI: exit 2, not "0 of 0"
    return run_audit(sel.doc, sel.targets, credentials, policy, workers, on_done=on_done)
