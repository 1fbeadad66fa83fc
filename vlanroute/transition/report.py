"""A transition as the operator sees it: the steps, what each touches, the proof, the cuts.

`lines()` is what `push --dry-run` (and push before its question, and rollback) prints;
`to_json()` is the `transition` object of their `--json` output (docs/json.md).
"""

from __future__ import annotations

from vlanroute.transition.planner import Transition
from vlanroute.vlanlist import format_vlan_list

MAX_CUT_LINES = 12


def _vlans(vlans: tuple[int, ...] | list[int]) -> str:
    return format_vlan_list(sorted(vlans)) if vlans else "none"


def lines(tr: Transition, detail: bool = False) -> list[str]:
    """The step sequence and its proof, one line per step; then the cuts (at most
    MAX_CUT_LINES unless `detail`) and the notes."""
    if not tr.steps:
        return ["transition: nothing to change"]
    waves = len(set(tr.waves))
    out = [f"transition: {len(tr.steps)} steps in {waves} wave{'s' if waves != 1 else ''} "
           f"(steps of one wave may run at once); every VLAN is loop-free in every state below"]
    if tr.split:
        out.append(f"  split into removals first and the rest later (no order of whole switches is loop-free): "
                   f"{', '.join(tr.split)}")
    for i, (step, proof, wave) in enumerate(zip(tr.steps, tr.proofs, tr.waves), start=1):
        links = ", ".join(f"{v}: {a} links" + (f" ({p} under spanning tree)" if p else "")
                          for v, (a, p) in sorted(proof.active.items()))
        out.append(f"  step {i} (wave {wave + 1}): {step.label()}; VLANs touched: {_vlans(proof.vlans)}; "
                   f"{proof.states} state{'s' if proof.states != 1 else ''} checked, every VLAN a forest"
                   + (f" [most active: {links}]" if links else ""))
    if tr.cuts:
        pairs = sum(c.count for c in tr.cuts)
        out.append(f"  host pairs cut on the way (delivered before and after, not in between): {pairs}")
        shown = tr.cuts if detail else tr.cuts[:MAX_CUT_LINES]
        out += [f"    {c.describe()}" for c in shown]
        if len(shown) < len(tr.cuts):
            out.append(f"    ... and {len(tr.cuts) - len(shown)} more (--json lists every one)")
    else:
        out.append("  no host pair delivered before and after is cut on the way")
    out += [f"  note: {n}" for n in tr.notes]
    if detail:
        # A split change is sent as its two halves, not as the switch's whole list above.
        for i, step in enumerate(tr.steps, start=1):
            if step.kind != "change":
                out.append(f"step {i}: {step.label()}: every line in send order")
                out += list(step.program.commands)
    return out


def to_json(tr: Transition) -> dict[str, object]:
    return {
        "steps": [{"step": i, "wave": w + 1, "switch": s.switch, "kind": s.kind,
                   "commands": len(s.program.commands), **p.to_json(),
                   # a split change's halves: the lines sent (a whole change's are the switch's own)
                   **({"lines": list(s.program.commands)} if s.kind != "change" else {})}
                  for i, (s, p, w) in enumerate(zip(tr.steps, tr.proofs, tr.waves), start=1)],
        "split": list(tr.split),
        "cuts": [c.to_json() for c in tr.cuts],
        "host_pairs_cut": sum(c.count for c in tr.cuts),
        "notes": list(tr.notes),
    }
