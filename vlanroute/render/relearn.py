"""`hosts/relearn.sh` of a repaired bundle (`vlanroute repair`): the host program once more on
every host, sending its learning frames in the repaired VLANs only (`vlanroute-host --vlans`),
through the same channels as hosts/install.sh (docs/method.md, "MAC tables after a repair")."""

from __future__ import annotations

from vlanroute.render.context import HOST_SCRIPT_PATH
from vlanroute.render.write import environment

RELEARN_FILE = "hosts/relearn.sh"


def relearn_script(plan_name: str, vlans: list[int]) -> str:
    if not vlans or not all(1 <= v <= 4094 for v in vlans):
        raise ValueError(f"VLAN ids 1..4094 expected, not {vlans}")
    ordered = sorted(set(vlans))
    return environment().get_template("host/relearn.sh.j2").render(
        plan_name=plan_name, vlan_list=" ".join(map(str, ordered)), vlan_csv=",".join(map(str, ordered)),
        script_path=HOST_SCRIPT_PATH)
