"""`vlanroute watch`: follow the link states of a published plan, heal, return to the plan.

The loop (docs/watch.md):

1. **Recover.** The watcher's journal (operate/journal.py) says whether the last action was
   left unfinished by a crash or a kill. Killed before its push started: nothing was sent,
   the action is dropped and decided again from what the links show. Killed while pushing:
   the push journal says how far the push went; a finished push is recorded as such, an
   unfinished one is finished (`push --resume`, under `auto`) or reported with the exact
   commands (under `propose`). Never a half-applied change the watcher does not know about.
2. **Watch.** Poll rounds (operate/poller.py) read every switch's link states; the debounce
   (operate/debounce.py) decides which ports count as down or back up; the plan's failures
   follow (operate/fabricview.py). A syslog hint (operate/syslog.py) starts a round at once.
3. **Decide.** When the failure set that counts differs from the one the fabric is set up
   for (the last action's), the strategies (operate/heal.py) write the bundle for it (the
   plan itself when nothing has failed), and the policy decides: `auto` pushes it, when every
   failure class in it is one the site heals, through the Python API's push (as `vlanroute
   push --yes`: cabling check, pre-flight of every switch, the loop-free transition, steps
   journaled, states recorded) under the fabric's lock, then audits; `propose` (or a class the
   site does not heal) writes the bundle and notifies with the commands to run.
   A cable down in a pair that keeps others changes no tree: it is noted, not pushed.
4. **Retry.** A push refused with nothing changed (the fabric busy, no loop-free transition,
   a switch failing its pre-flight, the cabling check) is tried again `retries` times,
   `retry_s` apart, then left to a person; a partial push or a failed rollback is left to a
   person at once (notified). The next change of the failure set is acted on again.
"""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlanroute import api
from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.failures import Failures, parse_failures
from vlanroute.device import journal as J
from vlanroute.device.credentials import Credentials
from vlanroute.device.journal import read_journal, sha256_text
from vlanroute.device.push import SUCCESS
from vlanroute.device.session import HostKeyPolicy
from vlanroute.device.statedir import FabricState, lock_fabric, now_stamp
from vlanroute.device.targets import Target
from vlanroute.errors import PlanError, UserError, VerificationError
from vlanroute.exitcodes import ExitCode
from vlanroute.operate.debounce import Debouncer
from vlanroute.operate.events import EventLog
from vlanroute.operate.fabricview import End, Observed, classify
from vlanroute.operate.heal import STRATEGIES, HealContext, NotApplicable, Remedy, plan_remedy, retree_remedy
from vlanroute.operate.journal import Action, WatchJournal, WatchJournalError, history, watch_dir
from vlanroute.operate.notify import Notifier
from vlanroute.operate.policy import WatchPolicy
from vlanroute.operate.poller import Poller, Reading
from vlanroute.operate.syslog import Hint, SyslogListener
from vlanroute.model.links import link
from vlanroute.safeio.private import ensure_private_subdir

KEEP_BUNDLES = 10               # the watcher's newest bundles kept (and any the journal still needs)
HINT_GAP_S = 1.0                # syslog hints start a round at most this often
REACH = ""                      # debounce key (REACH, switch): the switch answers (no switch name is empty)

# Action outcomes (the `done` record's `outcome`).
HEALED, RETURNED, PROPOSED, NOTED = "healed", "returned", "proposed", "noted"
RETRY, GAVE_UP, NEEDS_PERSON, ABANDONED, FAILED = "retry", "gave-up", "needs-person", "abandoned", "failed"
SETTLED = (HEALED, RETURNED, PROPOSED, NOTED)        # the fabric is set up for the failures (or told to be)


@dataclass(frozen=True)
class Connection:
    """How the switches are reached: as `vlanroute push` reaches them."""
    creds: Credentials
    known_hosts: Path | None = None
    insecure: bool = False
    ssh_config: Path | None = None
    ssh_agent: bool = False
    targets_file: Path | None = None
    workers: int = 4

    def host_keys(self) -> HostKeyPolicy:
        return HostKeyPolicy(check=not self.insecure, known_hosts=self.known_hosts, allow_agent=self.ssh_agent,
                             ssh_config_file=self.ssh_config)

    def api_options(self) -> dict[str, Any]:
        return {"known_hosts": self.known_hosts, "insecure_no_host_key_check": self.insecure,
                "ssh_config": self.ssh_config, "ssh_agent": self.ssh_agent, "targets": self.targets_file,
                "workers": self.workers}


@dataclass
class _Retry:
    failures: Failures
    attempts: int
    next_at: float


def failures_of(data: dict[str, list[str]]) -> Failures:
    return parse_failures(data.get("cables", []), data.get("pairs", []), data.get("switches", []))


def same(a: Failures, b: Failures) -> bool:
    return set(a.cables) == set(b.cables) and set(a.pairs) == set(b.pairs) and set(a.switches) == set(b.switches)


def breaking(f: Failures) -> bool:
    """Failures that change VLAN trees: a dead pair or switch (a lone cable of a LAG does not)."""
    return bool(f.pairs or f.switches)


def classes(f: Failures) -> set[str]:
    return ({"pair"} if f.pairs else set()) | ({"switch"} if f.switches else set())


class Watcher:
    def __init__(self, outdir: Path, doc: PlanDocument, plan_sha256: str, state: FabricState, policy: WatchPolicy,
                 conn: Connection, targets: list[Target], log: EventLog, *,
                 poller: Callable[..., Poller] = Poller, clock: Callable[[], float] = time.monotonic) -> None:
        self.outdir, self.doc, self.plan_sha256 = outdir.resolve(), doc, plan_sha256
        self.state, self.policy, self.conn, self.targets, self.log = state, policy, conn, targets, log
        self.clock = clock
        self.journal = WatchJournal.of(state)
        self.bundles = ensure_private_subdir(watch_dir(state), "bundles", "watcher's bundles folder")
        self.ctx = HealContext(self.outdir, doc, self.bundles)
        self.debounce = Debouncer(policy.debounce_polls, policy.debounce_s, policy.hold_down_s)
        self.ends: dict[str, list[str]] = {}          # switch -> its inter-switch ports (cable ends)
        for c in doc.cabling:
            self.ends.setdefault(c.a, []).append(c.a_port)
            self.ends.setdefault(c.b, []).append(c.b_port)
        hist = history(self.journal.records())
        self.acted = failures_of(hist.acted)          # what the fabric is set up for
        self._skipped: list[str] = []                 # this action's strategies that did not apply, and why
        self.current = self.acted                     # what the links show (once rounds came)
        self.observed = Observed(self.acted)
        self.unread: dict[str, str] = {}
        self.rounds: queue.Queue[tuple[float, dict[str, Reading]]] = queue.Queue()
        self.retry: _Retry | None = None
        self.given_up: Failures | None = None
        self.last_outcome: str | None = None
        self.actions_run: list[dict[str, Any]] = []
        self.rounds_seen = 0
        self._settling_since: float | None = None     # a decision waits for ports seen going down since then
        self.poller: Poller | None = None
        self.plan_changed = False
        self._plan_mark: tuple[int, int] | None = None
        self.exit_code = ExitCode.OK
        self._make_poller = poller
        self._last_hint = 0.0
        self.notify = Notifier(policy.notify, {"VLANROUTE_FABRIC": doc.name or "", "VLANROUTE_OUTDIR": str(self.outdir),
                                               "VLANROUTE_STATE_DIR": str(state.path)}, log)

    # -- the loop ---------------------------------------------------------------------------

    def run(self, stop: threading.Event, once: bool = False) -> ExitCode:
        self.journal.append("start", pid=_pid(), outdir=str(self.outdir), plan=self.doc.name,
                            plan_sha256=self.plan_sha256, policy=self.policy.to_json())
        self.log("started", outdir=str(self.outdir), state_dir=str(self.state.path), policy=self.policy.to_json(),
                 switches=len(self.targets), cables=len(self.doc.cabling), acted=self.acted.to_json(),
                 detection_bound_s=round(self.policy.detection_bound_s(), 3))
        poller = self._make_poller(self.targets, self.conn.creds, self.conn.host_keys(), self.policy.interval_s,
                                   lambda at, results: self.rounds.put((at, results)), fast_s=self.policy.fast_s())
        self.poller = poller
        listener = self._listen(poller)         # a port that cannot be had stops the watcher before it acts
        self.recover()
        self.debounce.assume(self._ends_of(self.acted), up=False)
        poller.start()
        started, seen_rounds = self.clock(), 0
        give_up_at = started + self.policy.debounce_s + self.policy.hold_down_s + 3 * self.policy.interval_s + 60
        try:
            while not stop.is_set():
                if self._plan_changed():
                    break
                try:
                    at, results = self.rounds.get(timeout=0.2)
                except queue.Empty:
                    if not once:
                        self.decide()            # a retry may be due
                    continue
                seen_rounds += 1
                self.observe(at, results)
                if not once:
                    self.decide()
                elif (seen_rounds >= self.policy.debounce_polls and not self._pending()) or self.clock() > give_up_at:
                    self.decide()
                    self.exit_code = self._once_code()
                    break
        finally:
            poller.stop()
            if listener is not None:
                listener.stop()
            self.log("stopped", acted=self.acted.to_json(), observed=self.current.to_json())
            try:
                self.journal.append("stop", acted=self.acted.to_json())
            except WatchJournalError:
                pass                    # a record of nothing to resume: its loss changes nothing
            self.notify.wait(timeout=10)
        return self.exit_code

    def _listen(self, poller: Poller) -> SyslogListener | None:
        if not self.policy.syslog_listen:
            return None

        def hint(h: Hint) -> None:
            now = self.clock()
            if now - self._last_hint < HINT_GAP_S:
                return
            self._last_hint = now
            self.log("hint", family=h.family, port=h.port, up=h.up, host=h.host, sender=h.sender)
            poller.poll_now()
        try:
            listener = SyslogListener.at(self.policy.syslog_listen, hint)
        except OSError as exc:
            raise UserError(f"cannot listen for syslog on {self.policy.syslog_listen}: {exc.strerror}",
                            field="--syslog-listen",
                            fix="choose a free address and port (a port below 1024 needs root), or leave it out") from None
        listener.start()
        self.log("syslog", listening=f"{listener.address[0]}:{listener.address[1]}")
        return listener

    def _plan_changed(self) -> bool:
        """OUTDIR's plan.json is not the one the watcher started with (rendered again): it stops,
        exit 1, so that the service manager starts it again on the new plan (Restart=on-failure)."""
        path = self.outdir / "plan.json"
        try:
            st = path.stat()
            mark = (st.st_mtime_ns, st.st_size)
            if mark == self._plan_mark:
                return False
            self._plan_mark = mark
            changed = sha256_text(path.read_text()) != self.plan_sha256
        except (OSError, UnicodeDecodeError):
            changed = True
        if changed:
            self.plan_changed = True
            self.exit_code = ExitCode.FAILED_CHECK
            self.log("plan-changed", outdir=str(self.outdir),
                     note="OUTDIR's plan.json changed (or is gone): the watcher stops, to be started again on it")
        return changed

    def _pending(self) -> bool:
        return any(self.debounce.pending(k) for k in self.debounce.keys)

    def _going_down(self) -> bool:
        """Ports that count as up and were seen down, not counted yet."""
        return any(s.up and s.polls for k, s in self.debounce.keys.items() if k[0] != REACH)

    def _settling(self) -> bool:
        """Wait while other ports are on their way to counting as down: the reads of one round
        are not one instant, so the far ends of a dead switch's cables can be seen down a round
        apart, and acting on the first of them alone would push twice (a pair's failover, then
        the switch's). A port on its way counts within the detection bound, unless its switch
        stops answering: the wait never lasts longer than that bound."""
        if not self._going_down():
            self._settling_since = None
            return False
        now = self.clock()
        if self._settling_since is None:
            self._settling_since = now
        return now - self._settling_since < self.policy.detection_bound_s()

    def _once_code(self) -> ExitCode:
        if self.exit_code != ExitCode.OK:
            return self.exit_code
        return ExitCode.OK if same(self.acted, self.current) and self.last_outcome in (None, *SETTLED) \
            and self.last_outcome != PROPOSED else ExitCode.FAILED_CHECK

    # -- observing -------------------------------------------------------------------------

    def observe(self, at: float, results: dict[str, Reading]) -> None:
        """One round: the debounce, then the failures it makes."""
        self.rounds_seen += 1
        for switch, reading in sorted(results.items()):
            read = isinstance(reading, dict)
            change = self.debounce.observe((REACH, switch), read, at)
            if change is not None:
                if change.up:
                    self.unread.pop(switch, None)
                    self.log("reachable", switch=switch)
                else:
                    self.unread[switch] = str(reading)
                    self.notify(self.log("unreachable", switch=switch, why=str(reading),
                                         note="not taken as a dead switch: its cables are judged from the far ends"))
            for port in self.ends.get(switch, []):
                up = reading.get(port) if isinstance(reading, dict) else None
                change = self.debounce.observe((switch, port), up, at)
                if change is not None:
                    self.log("link", switch=switch, port=port, up=change.up, after_s=round(change.after_s, 3),
                             round=self.rounds_seen)
        for key in self.debounce.flapping(at):
            if key[0] != REACH:
                self.notify(self.log("flapping", switch=key[0], port=key[1],
                                     note="changes of state that did not last: not counted as a failure"))
        down = {k for k, s in self.debounce.keys.items() if k[0] != REACH and not s.up}
        unread = {sw for sw, r in results.items() if not isinstance(r, dict)}
        observed = classify(self.doc, down, unread)
        if not same(observed.failures, self.current):
            self.log("failures", failures=observed.failures.to_json(), previous=self.current.to_json(),
                     classes=sorted(observed.classes), round=self.rounds_seen,
                     unknown_cables=[f"{a[0]} {a[1]} - {b[0]} {b[1]}" for a, b in observed.unknown_cables])
        self.current, self.observed = observed.failures, observed
        if self.poller is not None:       # a port seen down, not counted yet: the next reads come sooner
            self.poller.hurry = self._going_down()

    # -- deciding ---------------------------------------------------------------------------

    def decide(self) -> None:
        """Act on the failures that count, if they call for it. A journal record that cannot be
        written (a full disk) stops the action before its step, as in a push: it is tried again
        `retry_s` later, and the watcher goes on watching."""
        try:
            self._decide()
        except WatchJournalError as exc:
            self.retry = _Retry(self.current, self.retry.attempts if self.retry else 0, self.clock() + self.policy.retry_s)
            self.notify(self.log("journal-failed", error=exc.render(), in_s=self.policy.retry_s,
                                 note="nothing more was done for this change; tried again later"))

    def _decide(self) -> None:
        f = self.current
        if same(f, self.acted):
            self.retry, self.given_up = None, None
            return
        if self.given_up is not None:
            if same(f, self.given_up):
                return
            self.given_up = None
        if self.retry is not None:
            if not same(f, self.retry.failures):
                self.retry = None
            elif self.clock() < self.retry.next_at:
                return
        if self._settling():
            return
        if not breaking(f) and not breaking(self.acted):
            self._note(f)
            return
        auto = self.policy.policy == "auto" and classes(f) <= self.policy.heal
        self.act(f, auto)

    def _note(self, f: Failures) -> None:
        """Cables of a LAG that keeps others: no tree changes, nothing to push."""
        aid = now_stamp()
        self.journal.append("intent", action=aid, mode="note", kind="note", failures=f.to_json(),
                            previous=self.acted.to_json())
        self._close(aid, NOTED, f)
        self.acted = f
        event = "degraded" if f else "restored"
        self.notify(self.log(event, failures=f.to_json(),
                             note="cables down in pairs that keep others: every VLAN still crosses them; "
                                  "less capacity, nothing to repair" if f else "every cable is back"))

    def act(self, f: Failures, auto: bool) -> None:
        aid = now_stamp()
        kind = "heal" if breaking(f) else "return"
        mode = "auto" if auto else "propose"
        previous = self.acted
        self.journal.append("intent", action=aid, mode=mode, kind=kind, failures=f.to_json(),
                            previous=previous.to_json(), strategies=list(self.policy.strategies))
        self.log("deciding", action=aid, kind=kind, mode=mode, failures=f.to_json(), previous=previous.to_json(),
                 why=None if auto or self.policy.policy == "propose" else
                 f"the site heals {sorted(self.policy.heal)} automatically, not {sorted(classes(f) - self.policy.heal)}")
        makers = self._makers(f, aid)
        self._skipped = []
        if not auto:
            try:
                remedies = [r for make in makers if (r := self._written(aid, make)) is not None]
                if not remedies:
                    raise PlanError("no strategy of the policy applies: " + "; ".join(self._skipped),
                                    field="operation.watch.strategies", fix="add repair to the strategies")
            except WatchJournalError:
                raise
            except (UserError, VerificationError) as exc:
                self._heal_failed(aid, f, previous, exc)
                return
            self._close(aid, PROPOSED, f)
            self.acted = f
            self.notify(self.log("proposed", action=aid, kind=kind, failures=f.to_json(),
                                 bundles=[str(r.bundle) for r in remedies], summary=[r.summary for r in remedies],
                                 commands=self._commands(remedies)), bundle=str(remedies[-1].bundle))
            return
        try:
            lock = lock_fabric(self.state, "watch")
        except UserError as exc:
            self._close(aid, RETRY, previous, error=exc.message)
            self._schedule_retry(f, "busy", exc.message)
            return
        # Each strategy's bundle is written and pushed before the next one is written: a fast
        # remedy (a failover) must not wait for a slower one (the balanced repair).
        remedies = []
        code, run_error = int(ExitCode.OK), None
        failure: UserError | VerificationError | None = None
        try:
            for make in makers:
                try:
                    remedy = self._written(aid, make)
                except WatchJournalError:
                    raise
                except (UserError, VerificationError) as exc:
                    failure = exc
                    break
                if remedy is None:
                    continue
                if remedy.strategy == "repair" and remedies and remedies[-1].strategy == "failover":
                    # The repair's trees first, the PVIDs still failed over: no host pair
                    # is cut on the way (bundle/failedover.py retreed_document).
                    step = self._written(aid, functools.partial(retree_remedy, self.ctx, f, aid))
                    assert step is not None
                    remedies.append(step)
                    code, run_error = self._push_all(aid, [step])
                    if code != ExitCode.OK or not self._learned(aid, step, remedy):
                        break
                remedies.append(remedy)
                code, run_error = self._push_all(aid, [remedy])
                if code != ExitCode.OK:
                    break
        finally:
            lock.release()
        if failure is None and not remedies:
            failure = PlanError("no strategy of the policy applies: " + "; ".join(self._skipped),
                                field="operation.watch.strategies", fix="add repair to the strategies")
        if failure is not None:
            self._heal_failed(aid, f, previous, failure, pushed=[str(r.bundle) for r in remedies])
            return
        self._after_push(aid, f, previous, kind, remedies, code, run_error)

    def _makers(self, f: Failures, aid: str) -> list[Callable[[], Remedy]]:
        """What writes each bundle for `f`, in the policy's order (the plan itself when nothing has failed)."""
        if not f:
            return [lambda: plan_remedy(self.ctx, self._last_relearn())]
        return [functools.partial(STRATEGIES[name].remedy, self.ctx, f, aid) for name in self.policy.strategies]

    def _written(self, aid: str, make: Callable[[], Remedy]) -> Remedy | None:
        """The remedy `make` writes, journaled; None (logged) where its strategy does not apply."""
        try:
            r = make()
        except NotApplicable as exc:
            self._skipped.append(str(exc))
            self.log("skipped", action=aid, strategy=exc.strategy, why=exc.why)
            return None
        self.journal.append("bundle", action=aid, strategy=r.strategy, bundle=str(r.bundle), summary=r.summary,
                            relearn=str(r.relearn) if r.relearn else None)
        return r

    def _heal_failed(self, aid: str, f: Failures, previous: Failures, exc: UserError | VerificationError,
                     pushed: list[str] | None = None) -> None:
        why = exc.render() if isinstance(exc, UserError) else f"the bundle failed its verification: {exc}"
        self._close(aid, FAILED, previous, error=why, pushed=pushed or [])
        self.given_up = f
        self.exit_code = ExitCode.FAILED_CHECK
        self.notify(self.log("heal-failed", action=aid, failures=f.to_json(), error=why, pushed=pushed or [],
                             note="no bundle could be written for these failures; a person must decide"))

    def _push_all(self, aid: str, remedies: list[Remedy], resume: Path | None = None) -> tuple[int, str | None]:
        """Push each remedy's bundle in turn; `resume`: the push journal of a push to finish."""
        code, error = int(ExitCode.OK), None
        for r in remedies:
            self.journal.append("pushing", action=aid, bundle=str(r.bundle), stamp=now_stamp(),
                                resume=str(resume) if resume else None)
            code, error, journal, counts = self._push(r.bundle, resume is not None)
            self.journal.append("pushed", action=aid, bundle=str(r.bundle), exit_code=code, journal=journal,
                                counts=counts, error=error)
            self.log("pushed", action=aid, bundle=str(r.bundle), exit_code=code, journal=journal, counts=counts,
                     error=error, resumed=resume is not None)
            if code != ExitCode.OK:
                break
        return code, error

    def _push(self, bundle: Path, resume: bool) -> tuple[int, str | None, str | None, dict[str, int]]:
        """`vlanroute push BUNDLE --yes` (or `--resume`) through the Python API."""
        try:
            run = api.push(bundle, self.conn.creds, dry_run=False, state_dir=self.state.path, resume=resume,
                           **self.conn.api_options())
        except UserError as exc:
            return exc.exit_code, exc.render(), None, {}
        failed = [f"{r.switch}: {r.result} ({r.message})" for r in run.results if r.result not in SUCCESS]
        return int(run.exit_code), "; ".join(failed) or None, run.journal, run.counts

    def _after_push(self, aid: str, f: Failures, previous: Failures, kind: str, remedies: list[Remedy], code: int,
                    error: str | None) -> None:
        if code == ExitCode.OK:
            audit = self._audit(aid, remedies[-1].bundle) if self.policy.audit else None
            outcome = HEALED if kind == "heal" else RETURNED
            self._close(aid, outcome, f)
            self.acted, self.retry, self.given_up = f, None, None
            self.notify(self.log(outcome, action=aid, failures=f.to_json(), bundle=str(remedies[-1].bundle),
                                 summary=[r.summary for r in remedies], audit=audit,
                                 relearn=self._relearn_line(remedies)), bundle=str(remedies[-1].bundle))
            self._prune()
            return
        if code == ExitCode.FAILED_CHECK:           # nothing was changed: try again later
            self._close(aid, RETRY, previous, error=error, exit_code=code)
            self._schedule_retry(f, "refused", error)
            return
        # Partial, a failed rollback, or interrupted: where each switch stands is in the push
        # journal and the table; a person decides (rollback, push --resume, or a new push).
        self._close(aid, NEEDS_PERSON, previous, error=error, exit_code=code)
        self.given_up, self.retry = f, None
        self.exit_code = ExitCode(code) if code in (3, 4, 130) else ExitCode.FAILED_CHECK
        self.notify(self.log(NEEDS_PERSON, action=aid, failures=f.to_json(), exit_code=code, error=error,
                             commands=[f"vlanroute rollback {remedies[-1].bundle} --state-dir {self.state.path}",
                                       f"vlanroute push {remedies[-1].bundle} --resume --state-dir {self.state.path}"]),
                    bundle=str(remedies[-1].bundle))

    def _schedule_retry(self, f: Failures, why: str, error: str | None) -> None:
        attempts = (self.retry.attempts if self.retry is not None and same(self.retry.failures, f) else 0) + 1
        if attempts > self.policy.retries:
            self.given_up, self.retry = f, None
            self.exit_code = ExitCode.FAILED_CHECK
            self.notify(self.log(GAVE_UP, failures=f.to_json(), attempts=attempts, why=why, error=error,
                                 note="not changed after every retry; a person must act (the bundle and the "
                                      "error above), the watcher acts again on the next change of the links"))
            return
        self.retry = _Retry(f, attempts, self.clock() + self.policy.retry_s)
        self.log("retry", failures=f.to_json(), attempt=attempts, of=self.policy.retries, why=why, error=error,
                 in_s=self.policy.retry_s)

    def _learned(self, aid: str, step: Remedy, repair: Remedy) -> bool:
        """Whether the switches have learned the hosts in the repaired trees (the audit of
        the retree bundle passes), so the PVIDs may move back. Else the hosts stay on the
        backups: a switch of a changed VLAN that has not seen a host's learning frame
        since its tree changed may hold an entry pointing the old way, and unicast would
        follow it to a dead end (docs/method.md, "MAC tables after a repair"). Delivery is
        whole meanwhile; the repair's push waits for the hosts (relearn.sh, or the refresh
        job) and a person, or the return to the plan."""
        if step.relearn is None:
            return True
        audit = self._audit(aid, step.bundle)
        if audit.get("ok") is True:
            return True
        self.notify(self.log("holding", action=aid, bundle=str(repair.bundle), audit=audit,
                             relearn=self._relearn_line([step]),
                             note="the hosts stay on the backup VLANs (delivery is whole) until they have "
                                  "re-learned in the repaired trees: run the relearn line, then `vlanroute push "
                                  f"{repair.bundle}`; the return to the plan does not need it"),
                    bundle=str(repair.bundle))
        return False

    def _audit(self, aid: str, bundle: Path) -> dict[str, Any]:
        try:
            report = api.audit(bundle, self.conn.creds, known_hosts=self.conn.known_hosts,
                               insecure_no_host_key_check=self.conn.insecure, ssh_config=self.conn.ssh_config,
                               ssh_agent=self.conn.ssh_agent, targets=self.conn.targets_file, workers=self.conn.workers)
        except UserError as exc:
            result: dict[str, Any] = {"skipped": exc.message}
        else:
            if not report.checked and not report.errors:
                result = {"skipped": "nothing to check: no host of the plan has a MAC in the inventory"}
                self.journal.append("audited", action=aid, **result)
                return result
            result = {"ok": report.ok, "checked": report.checked, "missing_or_misplaced": len(report.findings),
                      "not_read": sorted(report.errors),
                      "note": None if report.ok else "entries missing until the hosts re-learn (relearn.sh, or the "
                                                     "refresh timer within its interval)"}
        self.journal.append("audited", action=aid, **result)
        return result

    def _close(self, aid: str, outcome: str, failures: Failures, **fields: Any) -> None:
        self.journal.append("done", action=aid, outcome=outcome, failures=failures.to_json(), **fields)
        self.last_outcome = outcome
        action = next((a for a in history(self.journal.records()).actions if a.id == aid), None)
        intent = action.intent if action is not None else {}
        bundle = action.last("bundle") if action is not None else None
        self.actions_run.append({"action": aid, "kind": intent.get("kind", "note"), "mode": intent.get("mode", "note"),
                                 "outcome": outcome, "failures": intent.get("failures") or failures.to_json(),
                                 "bundle": bundle.get("bundle") if bundle else None})

    def summary(self) -> dict[str, Any]:
        """What `vlanroute watch --json` prints when the watcher stops."""
        return {"outdir": str(self.outdir), "state_dir": str(self.state.path), "exit_code": int(self.exit_code),
                "policy": self.policy.to_json(), "acted": self.acted.to_json(), "observed": self.current.to_json(),
                "actions": self.actions_run}

    # -- what people are told ---------------------------------------------------------------

    def _commands(self, remedies: list[Remedy]) -> list[str]:
        sd = f"--state-dir {self.state.path}"
        out: list[str] = []
        for r in remedies:
            out += [f"vlanroute push {r.bundle} --dry-run {sd}", f"vlanroute push {r.bundle} {sd}"]
        line = self._relearn_line(remedies)
        if line:
            out.append(line)
        out.append(f"vlanroute audit {remedies[-1].bundle}")
        return out

    @staticmethod
    def _relearn_line(remedies: list[Remedy]) -> str | None:
        script = next((r.relearn for r in reversed(remedies) if r.relearn is not None), None)
        if script is None:
            return None
        return (f"on every compute node: sh {script} (a copy of its bundle's hosts/; its header gives the "
                "clush, pdsh and Ansible lines)")

    def _last_relearn(self) -> Path | None:
        """The relearn.sh of the repair the fabric runs now (its VLANs move back to the plan)."""
        for action in reversed(history(self.journal.records()).actions):
            done = action.first("done")
            if done is None or done.get("outcome") not in (HEALED, PROPOSED):
                continue
            bundle = action.last("bundle")
            if bundle is not None and bundle.get("relearn"):
                path = Path(str(bundle["relearn"]))
                return path if path.is_file() else None
            return None
        return None

    def _ends_of(self, f: Failures) -> set[End]:
        dead = set(f.switches)
        pairs = set(f.pairs)
        cables = set(f.cables)
        out: set[End] = set()
        for c in self.doc.cabling:
            if c.a in dead or c.b in dead or link(c.a, c.b) in pairs or (c.a, c.a_port) in cables \
                    or (c.b, c.b_port) in cables:
                out |= {(c.a, c.a_port), (c.b, c.b_port)}
        return out

    def _prune(self) -> None:
        """Keep the newest KEEP_BUNDLES bundles, and every bundle the journal's last actions name."""
        import shutil
        needed = {str(r.get("bundle")) for a in history(self.journal.records()).actions[-KEEP_BUNDLES:]
                  for r in a.records if r.get("bundle")}
        found = sorted(p for p in self.bundles.iterdir() if p.is_dir() and not p.is_symlink())
        for path in found[:-KEEP_BUNDLES]:
            if str(path) not in needed:
                shutil.rmtree(path, ignore_errors=True)

    # -- after a restart ---------------------------------------------------------------------

    def recover(self) -> None:
        """Close the action a killed watcher left open (module docstring, step 1)."""
        action = history(self.journal.records()).unfinished
        if action is None:
            return
        intent = action.intent
        f = failures_of(intent.get("failures") or {})
        previous = failures_of(intent.get("previous") or {})
        pushing = action.last("pushing")
        if pushing is None:
            self._close(action.id, ABANDONED, previous, note="stopped before anything was pushed")
            self.log("recovered", action=action.id, outcome=ABANDONED,
                     note="the last action stopped before its push: nothing was changed; deciding again")
            return
        pushed = action.last("pushed")
        if pushed is not None and pushed.get("bundle") == pushing.get("bundle"):
            code = int(pushed.get("exit_code", 1))
            outcome = (HEALED if intent.get("kind") == "heal" else RETURNED) if code == 0 else NEEDS_PERSON
            self._close(action.id, outcome, f if code == 0 else previous, note="recovered after a restart")
            if code == 0:
                self.acted = f
            self.log("recovered", action=action.id, outcome=outcome, note="the push had ended")
            return
        self._recover_push(action, f, previous, pushing)

    def _push_journal_of(self, bundle: Path, stamp: str, resumed: object) -> tuple[Path | None, Any, Path | None]:
        """The push journal of the watcher's push of `bundle` started at `stamp` (or the one it
        was resuming), its view, and a newer push journal if there is one."""
        found = sorted(self.state.pushes.glob("*.jsonl")) if self.state.pushes.is_dir() else []
        if isinstance(resumed, str) and resumed:
            candidates = [Path(resumed)]
        else:
            candidates = [p for p in found if p.stem >= stamp]
        for path in candidates:
            try:
                view = read_journal(path, tolerant=True)
            except UserError:
                continue
            if view.header.get("outdir") == str(bundle.resolve()):
                newer = [p for p in found if p.stem > path.stem]
                return path, view, (newer[-1] if newer else None)
        return None, None, None

    def _recover_push(self, action: Action, f: Failures, previous: Failures, pushing: dict[str, Any]) -> None:
        bundle = Path(str(pushing.get("bundle")))
        path, view, later = self._push_journal_of(bundle, str(pushing.get("stamp", "")), pushing.get("resume"))
        kind = str(action.intent.get("kind", "heal"))
        if view is None:            # the push never wrote its journal: it changed nothing
            self._close(action.id, ABANDONED, previous, note="killed before the push journaled a change")
            self.log("recovered", action=action.id, outcome=ABANDONED,
                     note="the push had not started changing switches; deciding again")
            return
        if later is not None:       # someone pushed or rolled back since: theirs is the fabric now
            self._close(action.id, ABANDONED, previous, note=f"superseded by a later push ({later})")
            self.log("recovered", action=action.id, outcome=ABANDONED, journal=str(path), later=str(later),
                     note="a later push or rollback changed the fabric since; not resumed, deciding again")
            return
        done = {J.SAVED, J.UNCHANGED} | ({J.APPLIED} if view.header.get("save") is False else set())
        unfinished = [name for name, h in view.switches.items() if h.state not in done]
        if view.ended and not unfinished:
            outcome = HEALED if kind == "heal" else RETURNED
            self.journal.append("pushed", action=action.id, bundle=str(bundle), exit_code=0, journal=str(path),
                                recovered=True)
            self._close(action.id, outcome, f, note="the push had finished before the restart")
            self.acted = f
            self.log("recovered", action=action.id, outcome=outcome, journal=str(path))
            return
        if self.policy.policy != "auto":
            self._close(action.id, NEEDS_PERSON, previous, note="a push of this watcher stopped half way")
            self.given_up = f
            self.notify(self.log(NEEDS_PERSON, action=action.id, journal=str(path), unfinished=unfinished,
                                 note="the watcher was stopped in the middle of a push and its policy is now "
                                      "propose: finish it or undo it",
                                 commands=[f"vlanroute push {bundle} --resume --state-dir {self.state.path}",
                                           f"vlanroute rollback {bundle} --state-dir {self.state.path}"]),
                        bundle=str(bundle))
            return
        self.log("resuming", action=action.id, journal=str(path), unfinished=unfinished, bundle=str(bundle))
        try:
            lock = lock_fabric(self.state, "watch")
        except UserError as exc:
            self._close(action.id, NEEDS_PERSON, previous, error=exc.message)
            self.given_up = f
            self.notify(self.log(NEEDS_PERSON, action=action.id, journal=str(path), error=exc.message,
                                 commands=[f"vlanroute push {bundle} --resume --state-dir {self.state.path}"]))
            return
        try:
            code, error = self._push_all(action.id, [Remedy("resume", bundle, f"resume {bundle}")], resume=path)
        finally:
            lock.release()
        if code == ExitCode.OK:
            outcome = HEALED if kind == "heal" else RETURNED
            self._close(action.id, outcome, f, note="resumed after a restart")
            self.acted = f
            self.notify(self.log("recovered", action=action.id, outcome=outcome, journal=str(path),
                                 note="the push the watcher was killed in was finished (push --resume)"),
                        bundle=str(bundle))
            return
        self._close(action.id, NEEDS_PERSON, previous, error=error, exit_code=code)
        self.given_up = f
        self.notify(self.log(NEEDS_PERSON, action=action.id, journal=str(path), exit_code=code, error=error,
                             commands=[f"vlanroute push {bundle} --resume --state-dir {self.state.path}",
                                       f"vlanroute rollback {bundle} --state-dir {self.state.path}"]),
                    bundle=str(bundle))


def _pid() -> int:
    import os
    return os.getpid()
