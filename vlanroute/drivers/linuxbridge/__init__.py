"""Linux VLAN-aware bridge (iproute2; family `linux-bridge`): a POSIX sh script that turns a
Linux box into the planned switch, and the data plane of `vlanroute emulate`.

Not managed over SSH: the script is run on the box itself. A LAG is a bonding device
`bondN`, which is also how `bridge fdb` names it.
"""

from __future__ import annotations

from vlanroute.drivers.family import Capabilities, Family
from vlanroute.drivers.linuxbridge import parser
from vlanroute.model.bridge import SwitchConfig
from vlanroute.model.platforms import Platform


class LinuxBridge(Family):
    name = "linux-bridge"
    title = "Linux bridge"
    capabilities = Capabilities(
        host_untagged_in_many_vlans=True,        # per-VLAN untagged flag on a bridge port
        eee=False,                               # a per-NIC ethtool setting, not in the script
        lag_hash_modes={"src-dst-ip-port": "layer3+4"},
        push=False, audit=False, emulate=True)

    def parse(self, text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
        return parser.parse(text, switch=switch, platform=platform, source=source)

    def lag_label(self, lag_id: int) -> str:
        return parser.bond_name(lag_id)


LINUX_BRIDGE = LinuxBridge()
