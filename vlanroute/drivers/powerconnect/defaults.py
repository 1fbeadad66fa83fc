"""What a Dell PowerConnect 62xx / OS6 switch does when its config says nothing: the
running config prints no line for it, so push must not expect one (docs/platforms/).

Bracketed keys are the sources listed on docs/platforms/powerconnect-62xx.md and dell-os6.md.
"""

from __future__ import annotations

from vlanroute.drivers.family import FirmwareDefaults

PC62XX_DEFAULTS = FirmwareDefaults(
    flow_control=True,
    lag_hash=None,
    sources={
        "flow_control": "confirmed on: a real 8024F on firmware 3.1 prints no flowcontrol line, "
                        "yet `show interfaces status` ends `Flow Control:Enabled` [8024F]; the same "
                        "on a 6248 [R2N]",
        "aging_time": "confirmed 300 s: `Aging time is 300 Sec` with no aging line [FS], [NM]",
        "spanning_tree": "on (inferred): a real 6248 config has to say `no spanning-tree` [A]",
        "port_mode": "confirmed access, VLAN 1: ports print nothing until changed, "
                     "`switchport access vlan N` appears without `switchport mode access` [B], [8024F]",
        "vlan_1": "confirmed: VLAN 1 holds every unconfigured port and LAG [8024F] (`show vlan`)",
        "lag_hash": "unknown: no 62xx source; the FASTPATH sibling defaults to 3 (MAC based) [FP]",
        "acceptable_frames": "admit all (the positive `tagged-only` form is what is printed) [CB]",
    })

OS6_DEFAULTS = FirmwareDefaults(
    flow_control=None,
    lag_hash="7",
    sources={
        "flow_control": "unknown: `show interfaces status` shows the operational state only [NPD]",
        "aging_time": "confirmed 300 s: `Aging time is 300 Sec`, no aging line in the running config [NPD]",
        "spanning_tree": "unknown (no `spanning-tree mode` line in any OS6 capture)",
        "port_mode": "confirmed access, VLAN 1: status column M = A, VLAN 1 [NPD], [OS6F]",
        "vlan_1": "confirmed: VLAN 1 holds Po1-128 and every unconfigured port [NPD]",
        "lag_hash": "confirmed 7 (enhanced): a port-channel made without `hashing-mode` shows "
                    "Hash Type 7 [VMW], [N3200]",
    })
