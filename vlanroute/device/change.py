"""One machinery for every change to the switches: push, the push of a repair, the return
to the plan, rollback (of a push, or to any recorded state), the Python API and the Nornir
task all go through it (docs/push.md, "Transitions").

1. Read: every switch of the fabric is logged in to and its running config backed up:
   the switches to change (push's preview pass: pre-flight, the change computed), and
   the others read only, since a change is loop-free only together with what they run.
   A switch that cannot be read counts as the worst case (vlanroute.transition.fabric).
2. Plan: the transition (vlanroute.transition.planner) from what the switches run now,
   never from the bundle the last push wrote: every state after every step, and after
   every line where a switch applies lines one by one, loop-free; refused with the reason
   and the way out when no such sequence exists.
3. Show: the steps, the VLANs each touches, the proof, the host pairs cut on the way.
4. Execute: step by step, the steps of a wave at once (Pusher.run_steps), every step
   journaled first; the fabric's state before and after recorded (device/history.py).

The cables a transition is checked on: the plan's, the ones of the fabric's last recorded
state, and those a repair found dead (a cable reported down may come back at any moment,
so it counts as if it were up).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from vlanroute.bundle.document import PlanDocument
from vlanroute.device.history import StateKind, StateRecord, last_cabling, record_state
from vlanroute.device.repairpush import down_cables
from vlanroute.device.push import (APPLIED, APPLIED_UNSAVED, NOT_STARTED, PARTLY_APPLIED, PUSH_EVENTS,
                                   ROLLED_BACK, SAVE_UNCERTAIN, SKIPPED, STEPPED, SUCCESS, Events, Prepared,
                                   Pusher, StepJob, SwitchResult, canonical_of, parse_target_config, prepare)
from vlanroute.device.statedir import FabricState
from vlanroute.device.targets import Target, TargetMap, select_targets
from vlanroute.errors import UserError
from vlanroute.model.bridge import SwitchConfig
from vlanroute.natural import natsorted
from vlanroute.transition.fabric import Fabric, FabricView, HostAt, SwitchView, Wire, view_of
from vlanroute.transition.planner import NoSafeTransition, Step, Transition, plan
from vlanroute.transition.program import Program, parse_with, program_of, removal_config

# -- the fabric ------------------------------------------------------------------------------

def repair_down_cables(outdir: Path) -> list[Wire]:
    """The cables a repaired bundle routes around (repair.json `down_cables`), if any."""
    return [Wire(*row) for row in down_cables(outdir)]


def fabric_of(doc: PlanDocument, state: FabricState | None, outdir: Path | None) -> Fabric:
    """The plan's cables, those of the fabric's last recorded state, and those a repair
    found dead; the plan's host ports."""
    wires: dict[tuple[object, ...], Wire] = {}

    def add(w: Wire) -> None:
        key = tuple(sorted([(w.a, w.a_port), (w.b, w.b_port)]))
        wires.setdefault(key, w)

    for c in doc.cabling:
        add(Wire(c.a, c.a_port, c.b, c.b_port))
    for w in (last_cabling(state) if state is not None else ()):
        add(w)
    for w in (repair_down_cables(outdir) if outdir is not None else []):
        add(w)
    hosts = tuple(HostAt(name, h.switch, h.port) for name, h in sorted(doc.hosts.items()))
    return Fabric(tuple(sorted(wires.values())), hosts)


def observers(outdir: Path, doc: PlanDocument, targets: Sequence[Target],
              target_map: TargetMap | None) -> tuple[list[Target], dict[str, str]]:
    """The plan's other switches, to read only; and those that cannot be, with the reason."""
    chosen = {t.name for t in targets}
    found: list[Target] = []
    unknown: dict[str, str] = {}
    for name in natsorted(doc.switches):
        if name in chosen:
            continue
        try:
            found += select_targets(outdir, doc, (name,), action="push", dry_run=True,
                                    target_map=target_map).targets
        except UserError as exc:
            unknown[name] = exc.message
    return found, unknown


def start_views(fabric: Fabric, results: Mapping[str, SwitchResult], targets: Mapping[str, Target],
                strict: bool = False) -> tuple[dict[str, SwitchView | None], dict[str, str]]:
    """Every switch of the fabric as read: the parsed running config's view, or None."""
    views: dict[str, SwitchView | None] = {}
    unknown: dict[str, str] = {}
    for name in fabric.switches:
        res, target = results.get(name), targets.get(name)
        if res is None or target is None or res.final_text is None:
            views[name] = None
            unknown[name] = res.message if res is not None and res.message else "not in the plan, not read"
            continue
        cfg = res.prep.running if res.prep is not None else parse_target_config(target, res.final_text, f"{name} running-config",
                                                                    strict=False)
        views[name] = view_of(cfg, fabric.ports_of(name))
    return views, unknown


# -- the change: whole, or split in two -----------------------------------------------------

Rest = Callable[[Target, str], Prepared]       # the rest of a switch's change, from a running text


@dataclass
class Change:
    """The switches that change: their whole change, and on demand the same change split into
    removals and the rest (`rest` computes the second half from the first half's result)."""

    fabric: Fabric
    targets: dict[str, Target]
    whole: dict[str, Prepared]
    rest: Rest
    halves: dict[str, tuple[Prepared, Prepared] | None] = field(default_factory=dict)

    def cable_ports(self, name: str) -> set[str]:
        return {p for w in self.fabric.wires for s, p in w.ends() if s == name}

    def program(self, name: str, prep: Prepared) -> Program:
        t = self.targets[name]
        return program_of(name, prep.commands, parse_with(t.family, t.platform, name), prep.running_text,
                          self.fabric.ports_of(name), t.family, self.cable_ports(name), t.family.transaction is not None)

    def programs(self) -> dict[str, Program]:
        return {name: self.program(name, prep) for name, prep in self.whole.items()}

    def split(self, name: str) -> tuple[Program, Program] | None:
        halves = self._halves(name)
        if halves is None:
            return None
        return self.program(name, halves[0]), self.program(name, halves[1])

    def _halves(self, name: str) -> tuple[Prepared, Prepared] | None:
        if name not in self.halves:
            self.halves[name] = self._make_halves(name)
        return self.halves[name]

    def _make_halves(self, name: str) -> tuple[Prepared, Prepared] | None:
        t, whole = self.targets[name], self.whole[name]
        mid = removal_config(whole.running, whole.predicted, sorted(self.cable_ports(name)))
        removals = t.family.delta_commands(whole.running, mid)
        if canonical_of(t, mid) == canonical_of(t, whole.running):
            return None                 # nothing to take away first
        mid_text = whole.running_text + "\n" + "\n".join(removals)
        predicted = parse_target_config(t, mid_text, f"{name} removals", strict=False)
        first = Prepared(whole.running_text, whole.running, predicted, removals, _diff(t, whole.running, predicted))
        second = self.rest(t, mid_text)
        return first, second

    def prepared(self, step: Step) -> Prepared:
        if step.kind == "change":
            return self.whole[step.switch]
        halves = self._halves(step.switch)
        assert halves is not None
        return halves[0] if step.kind == "remove" else halves[1]

    def jobs(self, steps: Sequence[Step], backups: Mapping[str, Path | None], events: Events = PUSH_EVENTS,
             first: int = 1, saves: Mapping[str, bool] | None = None) -> list[StepJob]:
        """`saves`: per switch whether its last step saves (default: yes, unless --no-save)."""
        last = {s.switch: i for i, s in enumerate(steps)}
        return [StepJob(first + i, s.kind, self.targets[s.switch], self.prepared(s), backups.get(s.switch),
                        final=last[s.switch] == i, events=events,
                        save=True if saves is None else saves.get(s.switch, False)) for i, s in enumerate(steps)]


def _diff(target: Target, a: SwitchConfig, b: SwitchConfig) -> list[str]:
    return list(difflib.unified_diff(canonical_of(target, a), canonical_of(target, b), f"{target.name} running-config",
                                     f"{target.name} after the step", lineterm="", n=0))


def push_change(fabric: Fabric, targets: Mapping[str, Target], results: Mapping[str, SwitchResult],
                configs: Mapping[str, str] | None, strict: bool) -> Change:
    """A push's change: every target whose preview found something to send."""
    whole = {r.switch: r.prep for r in results.values() if r.prep is not None and r.diff}

    def rest(target: Target, running_text: str) -> Prepared:
        return prepare(target, running_text, strict, None if configs is None else configs[target.name])
    return Change(fabric, dict(targets), whole, rest)


def restore_change(fabric: Fabric, targets: Mapping[str, Target], current: Mapping[str, tuple[str, SwitchConfig]],
                   wanted: Mapping[str, SwitchConfig]) -> Change:
    """A rollback's change: each switch from what it runs to its recorded config, by the
    family's delta (spanning tree back on first, VLAN memberships, then the rest)."""
    whole: dict[str, Prepared] = {}
    for name, want in wanted.items():
        t = targets[name]
        text, cur = current[name]
        if canonical_of(t, cur) == canonical_of(t, want):
            continue
        whole[name] = Prepared(text, cur, want, t.family.delta_commands(cur, want), _diff(t, cur, want))

    def rest(target: Target, running_text: str) -> Prepared:
        cur = parse_target_config(target, running_text, f"{target.name} removals", strict=False)
        want = wanted[target.name]
        return Prepared(running_text, cur, want, target.family.delta_commands(cur, want), _diff(target, cur, want))
    return Change(fabric, dict(targets), whole, rest)


class Refused(UserError):
    """No loop-free transition: nothing is changed (exit 1)."""


def plan_transition(change: Change, start: FabricView, unknown: Mapping[str, str], order: Sequence[str],
                    workers: int) -> Transition:
    """The transition of `change` from `start`, with notes on the switches it could not read;
    Refused (naming the loop and the way out) when there is none."""
    try:
        tr = plan(change.fabric, start, change.programs(), change.split, order, workers)
    except NoSafeTransition as exc:
        blind = ""
        if unknown:
            blind = ("; switches that could not be read count as carrying every VLAN: "
                     + ", ".join(f"{n} ({why})" for n, why in sorted(unknown.items())))
        raise Refused(f"no loop-free transition: {exc.describe()}{blind}", fix=exc.fix,
                      exit_code=1) from None
    for name, why in sorted(unknown.items()):
        tr.notes.append(f"{name} could not be read ({why}): counted as carrying every VLAN on every cable")
    return tr


# -- execution ----------------------------------------------------------------------------------

def run_transition(pusher: Pusher, change: Change, tr: Transition, backups: Mapping[str, Path | None],
                   events: Events = PUSH_EVENTS, keep_going: bool = False,
                   on_wave: Callable[[list[StepJob]], None] = lambda jobs: None,
                   saves: Mapping[str, bool] | None = None) -> list[tuple[StepJob, SwitchResult]]:
    """Run the steps; with `keep_going`, after a failure the steps left are planned again
    from where the fabric stands (the failed switches left as they are), and run if that
    is loop-free too (else they are not run, and a note says why)."""
    steps, waves = list(tr.steps), list(tr.waves)
    jobs = change.jobs(steps, backups, events, saves=saves)
    done: list[tuple[StepJob, SwitchResult]] = []
    views: dict[str, SwitchView | None] = dict(tr.start)
    while jobs:
        results = pusher.run_steps(jobs, waves, on_wave)
        done += list(zip(jobs, results))
        failed: set[str] = set()
        for step, r in zip(steps, results):
            if r.result in (*SUCCESS, STEPPED, SAVE_UNCERTAIN):
                views[step.switch] = step.program.after
            elif r.result not in (SKIPPED, NOT_STARTED, ROLLED_BACK):
                views[step.switch] = None     # where it stands is not known: the worst case
            if r.result not in (*SUCCESS, STEPPED, SKIPPED):
                failed.add(step.switch)
        left = [(j, st) for j, st, r in zip(jobs, steps, results) if r.result == SKIPPED and st.switch not in failed]
        if not keep_going or not failed or not left or pusher.interrupted:
            break
        steps, waves, jobs = _replan(pusher, change, tr, views, left, failed, events, backups,
                                     first=max(j.index for j, _ in done) + 1, saves=saves)
        pusher.go_on()
    return done


def _replan(pusher: Pusher, change: Change, tr: Transition, views: dict[str, SwitchView | None],
            left: list[tuple[StepJob, Step]], failed: set[str], events: Events, backups: Mapping[str, Path | None],
            first: int, saves: Mapping[str, bool] | None) -> tuple[list[Step], list[int], list[StepJob]]:
    """--keep-going: the steps left, planned again with the switches that failed as they are."""
    whole: dict[str, Prepared] = {}
    for job, step in left:
        # A switch whose removals are done goes on from there; one not started, from the start.
        if step.kind == "remove" or step.switch not in whole:
            whole[step.switch] = change.whole[step.switch] if step.kind == "remove" else job.prep
    sub = Change(change.fabric, change.targets, whole, change.rest)
    try:
        again = plan(sub.fabric, views, sub.programs(), sub.split, list(whole), pusher.options.workers)
    except NoSafeTransition as exc:
        tr.notes.append(f"--keep-going: the steps left were not run: {exc.describe()}")
        return [], [], []
    tr.notes.append("--keep-going: the steps left were planned again around " + ", ".join(sorted(failed)))
    return list(again.steps), list(again.waves), sub.jobs(again.steps, backups, events, first=first, saves=saves)


def per_switch(order: Sequence[str], preview: Mapping[str, SwitchResult],
               done: Sequence[tuple[StepJob, SwitchResult]]) -> list[SwitchResult]:
    """One result per switch: the last of its steps, a split change stopped half way being
    `partly-applied`; commands and seconds summed; in `order`, the preview's result for a
    switch that took no step."""
    out: dict[str, SwitchResult] = {}
    stepped: dict[str, int] = {}
    for job, res in done:
        name = job.target.name
        prev = out.get(name)
        if res.result == SKIPPED and prev is not None:
            if prev.result == STEPPED:
                prev.result = PARTLY_APPLIED
                prev.message = _partly(stepped[name], "the run stopped")
            continue
        merged = replace(res, diff=preview[name].diff if name in preview else res.diff,
                         commands=preview[name].commands if name in preview else res.commands)
        if prev is not None:
            merged.commands_sent += prev.commands_sent
            merged.seconds += prev.seconds
            merged.final_text = res.final_text or prev.final_text
            if prev.result == STEPPED and res.result not in (APPLIED, APPLIED_UNSAVED, SAVE_UNCERTAIN):
                merged.result, merged.message = PARTLY_APPLIED, _partly(stepped[name], res.message)
        if res.result == STEPPED:
            stepped[name] = job.index
        out[name] = merged
    for name, res in out.items():
        if res.result == STEPPED:           # the run stopped right after a removal step
            res.result, res.message = PARTLY_APPLIED, _partly(stepped[name], "the run stopped")
    return [out.get(name) or preview[name] for name in order if name in out or name in preview]


def _partly(step: int, why: str) -> str:
    return (f"removals applied (step {step}), the rest not ({why}): every VLAN is loop-free as it stands; "
            "`vlanroute push OUTDIR --resume` finishes it, `vlanroute rollback OUTDIR` takes it back")


# -- the fabric's history ---------------------------------------------------------------------

def record(state: FabricState, kind: StateKind, command: str, *, journal: Path | None, doc: PlanDocument | None,
           plan_sha256: str | None, outdir: Path | None, fabric: Fabric,
           texts: Mapping[str, tuple[Path | None, str | None]], unknown: Mapping[str, str]) -> StateRecord | None:
    """Record the fabric's state: per switch its backup file (written now for a text that has
    none yet). A state that cannot be written is no reason to stop: None, the caller warns."""
    from vlanroute.device.journal import sha256_text
    switches: dict[str, tuple[Path, str] | str] = {}
    try:
        for name, (path, text) in texts.items():
            if text is None:
                switches[name] = unknown.get(name, "not known")
                continue
            if path is None or _read(path) != text:
                path = state.write_backup(name, text)
            switches[name] = (path, sha256_text(text))
        for name, why in unknown.items():
            switches.setdefault(name, why)
        return record_state(state, kind, command, journal=journal, plan=doc.name if doc else None,
                            plan_sha256=plan_sha256, outdir=outdir, switches=switches, cabling=list(fabric.wires))
    except (OSError, UserError):
        return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None


__all__ = ["Change", "Refused", "fabric_of", "observers", "per_switch", "plan_transition", "push_change",
           "record", "restore_change", "run_transition", "start_views"]
