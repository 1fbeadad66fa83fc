"""A push as one operation on the whole fabric, shared by `vlanroute push` and the Python
API (and so the Nornir task): the read pass, the transition, the steps, the history.

    preview()   log in to every switch: the targets' pre-flight and change (Pusher, dry
                run), the others read only; plan the transition (device/change.py)
    execute()   record the fabric's state, open the journal, run the steps wave by wave,
                save what a resumed push left unsaved, record the state reached
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from vlanroute.bundle.document import PlanDocument
from vlanroute.device.change import (Change, Refused, fabric_of, per_switch, plan_transition, push_change, record,
                                     run_transition, start_views)
from vlanroute.device.history import StateRecord
from vlanroute.device.journal import Journal, JournalWriteError, last_journal, read_journal, unfinished
from vlanroute.errors import UserError
from vlanroute.device.push import (NOT_STARTED, SKIPPED, SUCCESS, UNCHANGED, PushOptions, Pusher, StepJob,
                                   SwitchResult)
from vlanroute.device.statedir import FabricState
from vlanroute.device.targets import Target
from vlanroute.transition.fabric import Fabric
from vlanroute.transition.planner import Transition


@dataclass
class PushPreview:
    doc: PlanDocument
    outdir: Path
    results: list[SwitchResult]                  # the targets, in their order
    observed: dict[str, SwitchResult]            # the plan's other switches, read only
    targets: dict[str, Target]
    fabric: Fabric
    unknown: dict[str, str]                      # switches that could not be read: why
    interrupted: bool = False
    change: Change | None = None
    transition: Transition | None = None
    refused: Refused | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[SwitchResult]:
        return [r for r in self.results if r.result not in SUCCESS]

    @property
    def changing(self) -> list[SwitchResult]:
        return [r for r in self.results if r.diff]


def preview(pusher: Pusher, outdir: Path, doc: PlanDocument, state: FabricState, targets: Sequence[Target],
            others: Sequence[Target], unreadable: Mapping[str, str], configs: Mapping[str, str] | None,
            strict: bool, workers: int, previous: Mapping[str, SwitchResult] | None = None) -> PushPreview:
    """The read pass over the whole fabric, then the transition (nothing changed)."""
    results = pusher.run(list(targets), dict(previous) if previous else None)
    observed: dict[str, SwitchResult] = {}
    if others and not pusher.interrupted:
        with ThreadPoolExecutor(max_workers=max(1, min(workers, len(others)))) as pool:
            for res in pool.map(pusher.observe, others):
                observed[res.switch] = res
    fabric = fabric_of(doc, state, outdir)
    everyone = {t.name: t for t in [*targets, *others]}
    view = PushPreview(doc, outdir, results, observed, {t.name: t for t in targets}, fabric, dict(unreadable),
                       pusher.interrupted)
    for name, res in observed.items():
        if res.result == NOT_STARTED:
            view.unknown[name] = res.message
    if pusher.interrupted or view.failed:
        return view
    start, blind = start_views(fabric, {**{r.switch: r for r in results}, **observed}, everyone, strict)
    for name in blind:
        view.unknown.setdefault(name, blind[name])
    view.change = push_change(fabric, view.targets, {r.switch: r for r in results}, configs, strict)
    try:
        view.transition = plan_transition(view.change, start, {n: w for n, w in view.unknown.items() if n in start},
                                          [*doc.switches], workers)
    except Refused as exc:
        view.refused = exc
    return view


def left_unfinished(state: FabricState, plan: str | None) -> tuple[Path | None, dict[str, str]]:
    """The last push journal of this fabric and the switches it left unfinished (applied
    and not saved, half-applied, a save that did not confirm): a plain push must not call
    such a switch done because it is already as rendered (issue 41: a reboot would bring
    the old config back). A journal that cannot be read names nothing (push --resume and
    rollback say why)."""
    path = last_journal(state)
    if path is None:
        return None, {}
    try:
        view = read_journal(path, tolerant=True)
    except UserError:
        return path, {}
    if plan and view.header.get("plan") not in (None, plan):
        return path, {}
    return path, unfinished(view)


@dataclass
class PushOutcome:
    results: list[SwitchResult]                  # per switch, the targets' order
    journal: Journal
    before: StateRecord | None
    after: StateRecord | None
    problems: list[str]                          # journal or history records not written
    interrupted: bool


def execute(view: PushPreview, pusher: Pusher, state: FabricState, journal: Journal | None,
            header: Mapping[str, object], options: PushOptions, resave: Sequence[SwitchResult] = (),
            on_wave: Callable[[list[StepJob]], None] = lambda jobs: None) -> PushOutcome:
    """Record the fabric's state, run the transition's steps, save what a resumed push left
    unsaved, record the state reached. `journal`: a resumed push's; else one is created
    with `header`."""
    assert view.change is not None and view.transition is not None
    tr = view.transition
    everyone = {**{r.switch: r for r in view.results}, **view.observed}
    plan_sha = header.get("plan_sha256")
    before = record(state, "before", "push", journal=journal.path if journal else None, doc=view.doc,
                    plan_sha256=plan_sha if isinstance(plan_sha, str) else None, outdir=view.outdir,
                    fabric=view.fabric, texts={n: (r.backup, r.final_text) for n, r in everyone.items()},
                    unknown=view.unknown)
    problems: list[str] = [] if before is not None else ["the fabric's state before the push was not recorded"]
    steps = [[s.switch, s.kind, len(s.program.commands), wave + 1] for s, wave in zip(tr.steps, tr.waves)]
    if journal is None:
        journal = Journal.create(state, **header, steps=steps, state_before=before.id if before else None)
    else:
        journal.append("resume", switches=sorted({s.switch for s in tr.steps} | {r.switch for r in resave}),
                       save=options.save, steps=steps, state_before=before.id if before else None)
    pusher.journal = journal
    backups = {r.switch: r.backup for r in view.results}
    done = run_transition(pusher, view.change, tr, backups, keep_going=options.keep_going, on_wave=on_wave)
    final = per_switch([r.switch for r in view.results], {r.switch: r for r in view.results}, done)
    by_name = {r.switch: r for r in final}
    if resave and not pusher.interrupted:
        saved = pusher.run([view.targets[r.switch] for r in resave], {r.switch: r for r in resave})
        for r in saved:
            by_name[r.switch] = r
    final = [by_name.get(r.switch, r) for r in view.results]
    texts = {n: (r.backup, r.final_text) for n, r in everyone.items()}
    unknown = dict(view.unknown)
    for r in final:
        if r.final_text is not None:
            texts[r.switch] = (r.backup if r.result == UNCHANGED else None, r.final_text)
        elif r.result not in (UNCHANGED, SKIPPED, NOT_STARTED):
            texts[r.switch] = (None, None)       # where it stands after a failure is not known
            unknown[r.switch] = f"{r.result} in this push: {r.message}"
    after = record(state, "after", "push", journal=journal.path, doc=view.doc,
                   plan_sha256=plan_sha if isinstance(plan_sha, str) else None, outdir=view.outdir,
                   fabric=view.fabric, texts=texts, unknown=unknown)
    if after is None:
        problems.append("the fabric's state after the push was not recorded")
    try:
        journal.append("end", interrupted=pusher.interrupted, state_after=after.id if after else None)
    except JournalWriteError as exc:
        problems.append(f"end not recorded: {exc.message}")
    problems += pusher.journal_problems
    return PushOutcome(final, journal, before, after, problems, pusher.interrupted)
