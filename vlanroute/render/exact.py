"""The bundle is exactly what vlanroute writes: render OUTDIR again from its plan.json (in
memory) and compare every file, line by line, with what is on disk.

manifest.json only proves that nobody changed a file without also recomputing the manifest;
this check needs no trust in it. Every line of a switch config, host table, refresh unit,
the host program, install.sh, cabling.csv or the post-push checks (checks.json and anta/:
vlanroute.render.checks and antacatalog) that render would not write for this plan is
named (file, line number, the line), and so is every line render writes that is missing,
and every file render would not write at all. The render options that plan.json does not
hold (learning method, host network, per-host scripts) come from manifest.json's "render"
record; any value there yields a bundle render itself could have written, so a recomputed
manifest cannot smuggle in anything else. Bundles from before that record: the options are
inferred (the candidate with the fewest differences).

verify's own parsers (vlanroute.drivers) and simulation stay: they check what the renderer
writes against the plan, independently of the templates; this checks the bundle against
the renderer.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import jinja2

from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.manifest import MANIFEST_FILE
from vlanroute.bundle.snapshot import BundleSnapshot, Entry
from vlanroute.errors import UserError
from vlanroute.render.context import HOST_NETWORKS, LEARNING_METHODS
from vlanroute.render.write import RenderOptions, environment, render_files
from vlanroute.safeio.reading import load_json

LINES_PER_FILE = 10          # named per file; the rest are counted


@dataclass
class ExactReport:
    """Differences between OUTDIR and a fresh render of its plan.json."""
    outdir: Path
    problems: list[str] = field(default_factory=list)
    files_checked: int = 0
    options: RenderOptions = field(default_factory=RenderOptions)

    @property
    def ok(self) -> bool:
        return not self.problems


def _text(entry: Entry) -> str | None:
    """The file's text, or None when it is not a regular UTF-8 file."""
    if entry.data is None:
        return None
    try:
        return entry.data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _shown(line: str, width: int = 160) -> str:
    return repr(line if len(line) <= width else line[:width] + "...")


def line_differences(rel: str, want: str, got: str, limit: int = LINES_PER_FILE) -> list[str]:
    """Each foreign line of `got` (not in `want`) and each missing one, with its line number
    in `got` (a missing line: where it belongs). At most `limit`, then a count."""
    if want == got:
        return []
    a, b = want.splitlines(), got.splitlines()
    found: list[str] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        for j in range(j1, j2):
            found.append(f"{rel}:{j + 1}: foreign line (render does not write it for this plan): {_shown(b[j])}")
        for i in range(i1, i2):
            found.append(f"{rel}:{j1 + 1}: missing line (render writes it here): {_shown(a[i])}")
    if not found and want != got:           # same lines, other line endings or final newline
        found.append(f"{rel}: line endings or the final newline differ from what render writes")
    if len(found) > limit:
        found = found[:limit] + [f"{rel}: ... and {len(found) - limit} more differing lines"]
    return found


def _compare(files: Mapping[str, str], present: Mapping[str, Entry]) -> list[str]:
    problems: list[str] = []
    for rel in sorted(files):
        if rel not in present:
            problems.append(f"{rel}: missing (render writes it for this plan)")
            continue
        got = _text(present[rel])
        if got is None:
            problems.append(f"{rel}: not a regular UTF-8 text file as render writes it")
            continue
        problems.extend(line_differences(rel, files[rel], got))
        executable = present[rel].executable
        if executable != files[rel].startswith("#!"):
            problems.append(f"{rel}: {'executable' if executable else 'not executable'}, "
                            f"render writes it {'executable' if not executable else 'not executable'}")
    for rel in sorted(present):
        if rel not in files:
            problems.append(f"{rel}: foreign file (render does not write it for this plan)")
    return problems


def _render_record(snap: BundleSnapshot) -> dict[str, object] | None:
    """manifest.json's "render" record, or None (no manifest, or one from before it)."""
    if MANIFEST_FILE not in snap.entries:
        return None
    try:
        data = load_json(snap.text(MANIFEST_FILE), str(snap.outdir / MANIFEST_FILE))
    except ValueError as exc:
        raise UserError(f"cannot read the manifest: {exc}", file=str(snap.outdir / MANIFEST_FILE),
                        fix="render OUTDIR again") from None
    record = data.get("render") if isinstance(data, dict) else None
    return record if isinstance(record, dict) else None


def _candidates(doc: PlanDocument, snap: BundleSnapshot) -> list[RenderOptions]:
    """The render options to try: the manifest's record, else every valid combination."""
    outdir = snap.outdir
    per_host = any(rel.startswith("hosts/per-host/") for rel in snap.entries)
    record = _render_record(snap)
    if record is not None:
        method, network, per = (record.get("learning_method"), record.get("host_network"),
                                record.get("per_host_scripts"))
        if method not in LEARNING_METHODS or network not in HOST_NETWORKS or not isinstance(per, bool):
            raise UserError(f'the "render" record is not one render writes: {record}',
                            file=str(outdir / MANIFEST_FILE), fix="render OUTDIR again")
        return [RenderOptions(learning_method=str(method), host_network=str(network), per_host_scripts=per)]
    ordered = [doc.settings.learning.method or "system"] + [m for m in LEARNING_METHODS]
    seen: list[RenderOptions] = []
    for method in dict.fromkeys(ordered):
        for network in HOST_NETWORKS:
            if network != "script" and method not in ("system", "ip-link"):
                continue
            seen.append(RenderOptions(learning_method=method, host_network=network, per_host_scripts=per_host))
    return seen


REPAIR_FILE = "repair.json"            # bundle/repaired.py: only in a bundle `vlanroute repair` wrote


def _repair_files(doc: PlanDocument, snap: BundleSnapshot) -> tuple[dict[str, str], list[str]]:
    """repair.json and hosts/relearn.sh of a repaired bundle. repair.json cannot be derived
    from plan.json alone (it describes the change from the plan before), so it is accepted
    only when it is consistent with plan.json: its format, its switches and VLANs those of
    the plan, every added link in its VLAN's tree and no removed one. It reaches no switch
    and no shell; what does, hosts/relearn.sh, is rendered again from it and compared."""
    if REPAIR_FILE not in snap.entries:
        return {}, []
    got = _text(snap.entries[REPAIR_FILE])
    try:
        record = load_json(got, REPAIR_FILE) if got is not None else None
    except (ValueError, UserError):
        record = None
    if not isinstance(record, dict) or record.get("format") != "vlanroute-repair/1":
        return {}, [f"{REPAIR_FILE}: not a repair record vlanroute writes (format vlanroute-repair/1)"]
    assert got is not None
    problems: list[str] = []
    trees = {v.id: {frozenset(link) for link in v.links} for v in doc.vlans}
    failures = record.get("failures")
    dead = failures.get("switches", []) if isinstance(failures, dict) else []
    # A dead switch has left plan.json but is named among the failures and the touched.
    switches = set(doc.switches) | {name for name in dead if isinstance(name, str)} if isinstance(dead, list) \
        else set(doc.switches)

    def names(key: str) -> list[object]:
        value = record.get(key, [])
        return value if isinstance(value, list) else [value]
    for key in ("push_order", "switches_touched"):
        for name in names(key):
            if name not in switches:
                problems.append(f"{REPAIR_FILE}: {key} names {name!r}, which is not a switch of plan.json")
    vlans = names("affected_vlans")
    for vid in vlans:
        if not isinstance(vid, int) or isinstance(vid, bool) or vid not in trees:
            problems.append(f"{REPAIR_FILE}: affected_vlans holds {vid!r}, which is not a VLAN of plan.json")
    for change in names("changes"):
        vid = change.get("vlan") if isinstance(change, dict) else None
        if not isinstance(change, dict) or vid not in trees:
            problems.append(f"{REPAIR_FILE}: a change of a VLAN plan.json does not have: {_shown(str(change))}")
            continue
        for key, inside in (("added", True), ("removed", False)):
            for link in change.get(key, []) if isinstance(change.get(key), list) else [change.get(key)]:
                ok = isinstance(link, list) and len(link) == 2 and all(isinstance(x, str) for x in link)
                if not ok or (frozenset(link or ()) in trees[vid]) != inside:
                    problems.append(f"{REPAIR_FILE}: VLAN {vid} {key} link {_shown(str(link))} "
                                    f"is {'not ' if inside else ''}in the VLAN's tree in plan.json")
    files = {REPAIR_FILE: got}
    if problems:
        return files, problems
    good = [int(str(v)) for v in vlans]
    if good and doc.hosts:
        from vlanroute.render.relearn import RELEARN_FILE, relearn_script
        files[RELEARN_FILE] = relearn_script(doc.name or snap.outdir.name, good)
    return files, problems


def check_exact(outdir: Path) -> ExactReport:
    """Render OUTDIR's plan.json again and compare every file (ExactReport.problems)."""
    return check_snapshot(BundleSnapshot.take(outdir))


def check_snapshot(snap: BundleSnapshot, doc: PlanDocument | None = None,
                   env: jinja2.Environment | None = None) -> ExactReport:
    """check_exact on a bundle already read (push checks exactly what it sends)."""
    outdir = snap.outdir
    doc = doc or snap.plan()
    env = env or environment()
    present = {rel: e for rel, e in snap.entries.items() if rel != MANIFEST_FILE}
    repair_files, repair_problems = _repair_files(doc, snap)
    best: ExactReport | None = None
    why = ""
    for options in _candidates(doc, snap):
        try:
            files = render_files(doc, options, env)
        except UserError as exc:
            why = why or exc.message
            continue                       # an option this plan does not allow
        files.update(repair_files)
        report = ExactReport(outdir, repair_problems + _compare(files, present), len(files), options)
        if report.ok:
            return report
        if best is None or len(report.problems) < len(best.problems):
            best = report
    if best is None:
        # Not provable, so not exact: e.g. an older plan.json without the record of a
        # derived platform. A violation, not a pass: deleting a record must not skip this.
        problem = (f"plan.json: cannot be rendered again to compare the files line by line "
                   f"({why}); render OUTDIR again with this version")
        return ExactReport(outdir, [problem])
    return best
