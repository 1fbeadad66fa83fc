"""The plan document (`vlanroute-plan/2`, docs/plan-format.md) as typed, validated records.

`Plan.to_document()` builds it, `vlanroute render` writes it as OUTDIR/plan.json, and every
command that reads an OUTDIR gets it from `bundle.reader.read_plan`, validated once, here:
- every name that can become a file name, a CLI word or a shell word (switch, host, port,
  interface, platform names) matches the inventory's own strict patterns, so a hand-edited
  plan.json cannot smuggle `../x`, `a b` or `x;reboot` into a path or a command;
- types and ranges (VLAN ids 1-4094, TCP ports, LAG ids, addresses) and the references
  between records (a host's switch exists, a port's role has its fields).
Whether the plan is *right* (trees, memberships, limits) is checked by render and verify.

The records are frozen: a stage that needs other values builds new ones.
`PlanDocument.to_json()` gives back the documented JSON object, key for key and in the
documented order, so plan.json bytes do not depend on how the document was made.

Format 2 is compact: nothing that a rule gives is written out per host. A host's learning
address in VLAN v is the first address of v's learning subnet + 1 + the host's `index`;
a host port that is an untagged member of every routing VLAN and tagged in none (the
method's rule) carries no VLAN lists, and reading fills them in (one shared list).
"""

from __future__ import annotations

import ipaddress
import json
from typing import Annotated, Any, Literal

from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, SerializationInfo, ValidationError,
                      model_serializer, model_validator)

from vlanroute.errors import UserError
from vlanroute.model.operation import HealClass, Strategy, listen_address, notify_command
from vlanroute.model.portlist import parse_port_list
from vlanroute.routing.trees import adjacency, reroot
from vlanroute.names import IFACE_PATTERN, IFNAME_MAX, NAME_PATTERN, PORT_PATTERN, management_address

FORMAT = "vlanroute-plan/2"
OLD_FORMATS = ("vlanroute-plan/1",)
REFIX = "render OUTDIR again from the inventory (`vlanroute render INVENTORY -o OUTDIR`); " \
        "plan.json is not meant to be edited"

# The inventory's patterns (vlanroute.names): the same names, the same rules.
Name = Annotated[str, Field(pattern=NAME_PATTERN)]
PortName = Annotated[str, Field(pattern=PORT_PATTERN)]
Iface = Annotated[str, Field(pattern=IFACE_PATTERN)]
VlanId = Annotated[int, Field(ge=1, le=4094)]      # 802.1Q; VLAN 1 is refused later, by rule
LagId = Annotated[int, Field(ge=1, le=4096)]
LagKey = Annotated[str, Field(pattern=r"^[1-9][0-9]{0,3}$")]
Token = Annotated[str, Field(pattern=r"^[A-Za-z0-9_+-]{1,32}$")]


def _ip_address(value: str) -> str:
    ipaddress.ip_address(value)             # ValueError -> a validation error at this field
    return value


def _ipv4_network(value: str) -> str:
    ipaddress.IPv4Network(value)
    return value


IpAddress = Annotated[str, AfterValidator(_ip_address)]
Ipv4Network = Annotated[str, AfterValidator(_ipv4_network)]
def _port_list(value: str) -> str:
    parse_port_list(value)                  # PortListError (a ValueError) -> a validation error
    return value


PortList = Annotated[str, Field(max_length=100_000), AfterValidator(_port_list)]
Mac = Annotated[str, Field(pattern=r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$"), AfterValidator(str.lower)]


class Record(BaseModel):
    # strict: no "101" for 101, no true for 1; extra keys are ignored, since later
    # versions of the format may add keys (docs/plan-format.md).
    model_config = ConfigDict(strict=True, frozen=True, extra="ignore")


class ProtectsDoc(Record):
    """A backup VLAN covers these links of one routing VLAN's tree (the fast failover)."""
    vlan: VlanId
    links: list[Annotated[list[Name], Field(min_length=2, max_length=2)]] = []


class VlanDoc(Record):
    id: VlanId
    sources: list[Name] = []
    switches: list[Name] = []
    links: list[Annotated[list[Name], Field(min_length=2, max_length=2)]] = []
    learning_subnet: Ipv4Network | None = None
    # A backup VLAN (routing.protection links): the routing VLANs it stands in for, and for
    # which of their links; absent for a routing VLAN.
    protects: list[ProtectsDoc] = []

    def link_pairs(self) -> list[tuple[str, str]]:
        return [(a, b) for a, b in self.links]


class HostDoc(Record):
    switch: Name
    port: PortName
    vlan: VlanId
    mac: Mac | None = None
    interface: Iface | None = None
    # inventory order, 0-based: the learning address in VLAN v is the first address of
    # v's learning subnet + 1 + index (no per-host address lists in format 2)
    index: Annotated[int, Field(ge=0, le=2**24)]


class PortDoc(Record):
    role: Literal["host", "inter-switch", "lag-member"]
    host: Name | None = None
    neighbor: Name | None = None
    lag: LagId | None = None
    pvid: VlanId | None = None
    # None: not written. A host port then follows the rule (untagged in every routing
    # VLAN, tagged in none) and PlanDocument fills both in; any other port: none.
    untagged: list[VlanId] = None  # type: ignore[assignment]
    tagged: list[VlanId] = None  # type: ignore[assignment]

    @model_validator(mode="after")
    def _fields_of_role(self) -> PortDoc:
        if self.role == "host" and self.host is None:
            raise ValueError("a host port names its host")
        if self.role != "host" and self.neighbor is None:
            raise ValueError(f"an {self.role} port names its neighbor switch")
        if self.role == "lag-member" and self.lag is None:
            raise ValueError("a lag-member port names its lag")
        return self

    @model_serializer
    def _json(self, info: SerializationInfo) -> dict[str, Any]:
        """The documented keys of each role, in the documented order; a host port that
        follows the rule (context "routing_ids": every routing VLAN) without its lists."""
        out: dict[str, Any] = {"role": self.role}
        if self.role == "host":
            out["host"] = self.host
            ids = (info.context or {}).get("routing_ids")
            if ids is not None and not self.tagged and (self.untagged is ids or self.untagged == ids):
                out["pvid"] = self.pvid
                return out
        else:
            out["neighbor"] = self.neighbor
            out["lag"] = self.lag
        out.update(pvid=self.pvid, untagged=self.untagged, tagged=self.tagged)
        return out


class LagDoc(Record):
    neighbor: Name
    members: list[PortName]
    tagged: list[VlanId] = []


class SwitchDoc(Record):
    platform: Name
    family: Name | None = None
    # vlanroute.model.bridge HOST_ATTACHMENTS; absent (a plan of an earlier version): untagged
    host_attachment: Literal["untagged", "trunk"] = "untagged"
    mgmt: Annotated[str, AfterValidator(management_address)] | None = None   # IP address or DNS name
    ssh_port: Annotated[int, Field(ge=1, le=65535)] | None = None
    coord: list[int] | None = None
    reserved_ports: list[PortName] = []
    ports: dict[PortName, PortDoc] = {}
    lags: dict[LagKey, LagDoc] = {}

    def lag_ids(self) -> list[int]:
        return sorted(int(k) for k in self.lags)

    def lag(self, lag_id: int) -> LagDoc | None:
        return self.lags.get(str(lag_id))


class PlatformRecord(Record):
    """A platform as the plan was checked against it (model.platforms.platform_json)."""
    base: Name | None = None
    family: Name
    ports: Annotated[int, Field(ge=1, le=65536)]
    # One line of printable text (no control character): it reaches messages and the lab
    # switches' `show system`; the inventory's own pattern is narrower still.
    description: Annotated[str, Field(pattern=r"^[^\x00-\x1f\x7f]{0,200}$")]
    max_vlans: int
    vid_min: int
    vid_max: int
    mac_capacity: int
    aging_min: int
    aging_max: int
    aging_default: int
    max_lags: int
    max_lag_members: int
    # A derived platform's own ports (model.platforms.platform_json): every port and the
    # default pool, as patterns such as "1/g1-1/g48,1/xg1-1/xg4"; absent: rebuilt from
    # `base` and the count `ports`.
    port_list: PortList | None = None
    auto_ports: PortList | None = None
    confirm: list[Token] = []        # capabilities the inventory confirmed; written only if any

    @model_serializer(mode="wrap")
    def _json(self, handler: Any) -> dict[str, Any]:
        """The documented keys; the port lists and `confirm` only where the platform has them."""
        out: dict[str, Any] = handler(self)
        for key in ("port_list", "auto_ports"):
            if out.get(key) is None:
                out.pop(key, None)
        if not out.get("confirm"):
            out.pop("confirm", None)
        return out


class LearningSettings(Record):
    pool: Ipv4Network | None = None
    # How the hosts send the learning frames (docs/plan-format.md); absent in older plans.
    method: Literal["system", "ip-link", "vconfig", "raw"] | None = None
    # The learning sub-interfaces are named prefix + VLAN id (`vr101`); absent: `vr`.
    interface_prefix: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_-]{0,13}$")] | None = None
    interval_s: int | None = None
    splay_s: int | None = None
    prefix_len: Annotated[int, Field(ge=0, le=32)] | None = None


class Settings(Record):
    aging_time: int | None = None              # None: the platform's maximum
    flow_control: bool | None = None           # None: not said (render: on)
    eee: bool = False
    lag_hash: Token = "src-dst-ip-port"
    host_attachment: Literal["auto", "untagged", "trunk"] = "auto"   # as the inventory asked
    learning: LearningSettings = LearningSettings()


class CableDoc(Record):
    a: Name
    a_port: PortName
    b: Name
    b_port: PortName
    a_lag: LagId | None = None
    b_lag: LagId | None = None


class AcknowledgedSyntax(Record):
    """The inventory's `site.acknowledged_syntax` (model/site.py): unconfirmed items of a
    family that the site checked on its switches; render does not warn about them."""
    family: Name
    commands: list[Annotated[str, Field(min_length=1, max_length=200)]]
    note: Annotated[str, Field(max_length=300)]
    by: Annotated[str, Field(max_length=80)]
    date: Annotated[str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]


class WatchDoc(Record):
    """The inventory's `operation.watch` (model/operation.py), every field written: the
    policy `vlanroute watch OUTDIR` follows (docs/watch.md). The same rules as the inventory:
    the notify hook is one printable line starting with an absolute path."""
    policy: Literal["auto", "propose"]
    heal: list[HealClass]
    strategies: Annotated[list[Strategy], Field(min_length=1)]
    interval_s: Annotated[float, Field(ge=0.2, le=3600)]
    debounce_polls: Annotated[int, Field(ge=1, le=100)]
    debounce_s: Annotated[float, Field(ge=0, le=86_400)]
    hold_down_s: Annotated[float, Field(ge=0, le=86_400)]
    notify: Annotated[str, AfterValidator(notify_command)] | None = None
    syslog_listen: Annotated[str, AfterValidator(listen_address)] | None = None
    audit: bool = True
    retries: Annotated[int, Field(ge=0, le=100)] = 3
    retry_s: Annotated[float, Field(ge=0, le=86_400)] = 60.0


class OperationDoc(Record):
    watch: WatchDoc | None = None


class PlanDocument(Record):
    format: Literal["vlanroute-plan/2"]
    name: Name | None = None
    inventory: str | None = None
    topology: dict[str, Any] = {}
    routing: dict[str, Any] = {}               # the routing engine's own description
    settings: Settings = Settings()
    vlans: list[VlanDoc]
    hosts: dict[Name, HostDoc]
    switches: dict[Name, SwitchDoc]
    platforms: dict[Name, PlatformRecord] = {}
    cabling: list[CableDoc]
    metrics: dict[str, Any] = {}
    warnings: list[str] = []
    # Written only when the inventory has any (a plan without stays byte-identical).
    acknowledged_syntax: list[AcknowledgedSyntax] = []
    # The inventory's `operation` section; written only when it has one (as above).
    operation: OperationDoc | None = None

    @model_serializer(mode="wrap")
    def _json(self, handler: Any, info: SerializationInfo) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if not out.get("acknowledged_syntax"):
            out.pop("acknowledged_syntax", None)
        if out.get("operation") is None:
            out.pop("operation", None)
        return out

    @model_validator(mode="after")
    def _port_rule(self) -> PlanDocument:
        """Fill in what format 2 leaves out: a host port without lists is an untagged member
        of every routing VLAN (one list shared by all such ports: the records are frozen)
        and tagged in none; any other port without lists is a member of nothing."""
        every = sorted(v.id for v in self.vlans)
        none: list[int] = []
        for sw in self.switches.values():
            for port in sw.ports.values():
                if port.untagged is None:
                    object.__setattr__(port, "untagged", every if port.role == "host" and port.tagged is None
                                       else none)
                if port.tagged is None:
                    object.__setattr__(port, "tagged", none)
        return self

    def routing_ids(self) -> list[int]:
        return sorted(v.id for v in self.vlans)

    def to_json(self) -> dict[str, Any]:
        """The documented JSON object (docs/plan-format.md), ready for json.dumps."""
        return self.model_dump(context={"routing_ids": self.routing_ids()})

    def to_json_text(self) -> str:
        """plan.json's bytes: `json.dumps(self.to_json(), separators=(",", ":"))` plus a
        newline (no indentation: the file is for programs; `python -m json.tool` shows it).

        pydantic's serialiser writes the same text several times faster, except for
        non-ASCII text (json.dumps escapes it) and floats that Python prints in exponent
        notation; those documents take the slow path."""
        fast = self.model_dump_json(context={"routing_ids": self.routing_ids()})
        if fast.isascii() and all(_plain_floats(v) for v in (self.topology, self.routing, self.metrics)):
            return fast + "\n"
        return json.dumps(self.to_json(), separators=(",", ":")) + "\n"


def _plain_floats(value: object) -> bool:
    """True if every float in `value` prints without an exponent (1e-4 <= |x| < 1e16, or 0)."""
    if isinstance(value, float):
        return value == 0.0 or 1e-4 <= abs(value) < 1e16
    if isinstance(value, dict):
        return all(_plain_floats(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_plain_floats(v) for v in value)
    return True


# --- validation: one place, one kind of error -------------------------------------------------

_WHAT_KEY = {"switches": "switch name", "hosts": "host name", "ports": "port name",
             "lags": "LAG id", "platforms": "platform name"}
_WHAT_FIELD = {"switch": "switch name", "neighbor": "switch name", "a": "switch name", "b": "switch name",
               "sources": "switch name", "host": "host name", "port": "port name", "a_port": "port name",
               "b_port": "port name", "members": "port name", "reserved_ports": "port name",
               "interface": "interface name", "platform": "platform name", "family": "family name"}
_NAME_RULE = "letters, digits, '_', '.', '-', starting with a letter, at most 63"
_RULES = {"switch name": _NAME_RULE, "host name": _NAME_RULE, "platform name": _NAME_RULE,
          "family name": _NAME_RULE, "name": _NAME_RULE,
          "port name": "letters, digits, '/', ':', '.', '-', at most 32",
          "interface name": f"letters, digits, '_', '-', starting with a letter, at most {IFNAME_MAX}",
          "LAG id": "a number from 1 to 9999"}


def _user_error(exc: ValidationError, source: str) -> UserError:
    """The first problem pydantic found, as a UserError naming plan.json and the field."""
    errors = exc.errors()
    err = errors[0]
    loc = [str(p) for p in err["loc"]]
    value = err.get("input")
    if loc and loc[-1] == "[key]":          # a mapping key: the name of a switch, host, port...
        loc = loc[:-1]
        value = loc.pop()
        what = _WHAT_KEY.get(loc[-1] if loc else "", "name")
    else:
        what = _WHAT_FIELD.get(next((p for p in reversed(loc) if not p.isdigit()), ""), "")
    field = ".".join(loc) or "(top level)"
    if what and err["type"] == "string_pattern_mismatch":
        message = f"{what} {value!r} is not allowed ({_RULES[what]})"
    elif err["type"] == "missing":
        message = "missing"
    elif isinstance(value, (dict, list)):
        message = err["msg"].removeprefix("Value error, ")
    else:
        message = f"{value!r}: {err['msg'].removeprefix('Value error, ')}"
    more = len(errors) - 1
    if more:
        message += f" (and {more} more problem{'s' if more > 1 else ''})"
    fix = REFIX
    if err["type"] == "string_pattern_mismatch":
        fix = "names from plan.json become file names and switch commands, so only these are accepted; " + fix
    return UserError(message, file=source, field=field, fix=fix)


def _check_references(doc: PlanDocument, source: str) -> None:
    """References between records that every reader relies on."""
    def bad(field: str, message: str) -> UserError:
        return UserError(message, file=source, field=field,
                         fix="plan.json must be the plan that wrote this OUTDIR; " + REFIX)
    switches = doc.switches
    for host, h in doc.hosts.items():
        if h.switch not in switches:
            raise bad(f"hosts.{host}.switch", f"switch {h.switch!r} is not in switches")
    for i, c in enumerate(doc.cabling):
        for end in ("a", "b"):
            if getattr(c, end) not in switches:
                raise bad(f"cabling[{i}].{end}", f"switch {getattr(c, end)!r} is not in switches")
        for end, port in (("a", c.a_port), ("b", c.b_port)):
            sw, other = (c.a, c.b) if end == "a" else (c.b, c.a)
            spec = switches[sw].ports.get(port)
            if spec is None or spec.role == "host" or spec.neighbor != other:
                raise bad(f"cabling[{i}].{end}_port", f"{sw} {port} is not an inter-switch port to {other} "
                                                      f"in switches.{sw}.ports")
    wired = {(sw, p.neighbor) for sw, spec in switches.items() for p in spec.ports.values()
             if p.role != "host"}
    for v in doc.vlans:
        for what, names in (("sources", v.sources), ("switches", v.switches)):
            for x in names:
                if x not in switches:
                    raise bad(f"vlans[{v.id}].{what}", f"switch {x!r} is not in switches")
        for a, b in v.links:
            for x, y in ((a, b), (b, a)):
                if x not in switches:
                    raise bad(f"vlans[{v.id}].links", f"switch {x!r} is not in switches")
                if (x, y) not in wired:
                    raise bad(f"vlans[{v.id}].links", f"link {a}-{b}: {x} has no inter-switch "
                                                      f"port to {y} in switches.{x}.ports")
        problem = _tree_problem(v)
        if problem:
            raise bad(f"vlans[{v.id}]", problem)
    with_hosts = {h.switch for h in doc.hosts.values()}
    for v in doc.vlans:
        problem = _unjoined(v, with_hosts)
        if problem:
            raise bad(f"vlans[{v.id}].links", problem)
    sources = {v.id: set(v.sources) for v in doc.vlans}
    for host, h in doc.hosts.items():
        if h.switch not in sources.get(h.vlan, set()):
            raise bad(f"hosts.{host}.vlan", f"VLAN {h.vlan} " + ("is not a VLAN of the plan" if h.vlan not in sources
                                                                 else f"does not have {h.switch} among its sources"))


def _tree_problem(v: VlanDoc) -> str | None:
    """Why the VLAN's links are not a forest over its switches, or None. Only that: a plan
    degraded by failures (failed over, repaired around a cut) may leave a VLAN in parts or a
    switch off its tree, but never a loop, which in a VLAN is a broadcast storm."""
    nodes = set(v.switches)
    root: dict[str, str] = {}

    def find(x: str) -> str:
        root.setdefault(x, x)
        while root[x] != x:
            root[x] = root[root[x]]
            x = root[x]
        return x
    for a, b in v.links:
        if nodes and (a not in nodes or b not in nodes):
            return f"link {a}-{b} leaves the VLAN's switches"
        ra, rb = find(a), find(b)
        if ra == rb:
            return f"link {a}-{b} closes a loop"
        root[ra] = rb
    return None


def _unjoined(v: VlanDoc, with_hosts: set[str]) -> str | None:
    """Why the VLAN's links do not carry its sources' frames to every switch with hosts, or
    None. Every plan that render, repair or failover writes joins them: a VLAN whose sources
    moved to a backup keeps no source, and a dead switch leaves the plan with its hosts. A
    VLAN that misses one leaves host pairs unreachable, and no figure of the plan holds."""
    if not v.sources or not with_hosts:
        return None
    start = v.sources[0]
    seen = {start, *reroot(adjacency((a, b) for a, b in v.links), start)}
    missing = sorted((with_hosts | set(v.sources)) - seen)
    if not missing:
        return None
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    return (f"its links do not join its source {start} to {shown}: hosts there could not reach "
            f"{start}'s hosts in VLAN {v.id}")


def plan_document(data: object, source: str = "plan.json") -> PlanDocument:
    """Validate parsed plan JSON; every problem is a UserError naming `source` and the field."""
    if isinstance(data, dict) and data.get("format") in OLD_FORMATS:
        raise UserError(f"format {data['format']} was written by an older vlanroute; this version reads "
                        f"{FORMAT} only (learning addresses by rule, no per-host lists)", file=source,
                        field="format", fix="re-render with this version: `vlanroute render INVENTORY -o OUTDIR`")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"not a {FORMAT} document", file=source, field="format",
                        fix="give the OUTDIR written by `vlanroute render` with this version of vlanroute")
    _one_object_per_name(data)
    try:
        doc = PlanDocument.model_validate(data)
    except ValidationError as exc:
        raise _user_error(exc, source) from None
    _check_references(doc, source)
    return doc


def _one_object_per_name(data: dict[str, Any]) -> None:
    """Every switch name in the VLANs, hosts, cabling and ports' and LAGs' neighbours made
    the one str object of its key in `switches` (the validated document keeps them). json.loads makes a new object per
    occurrence, and a dict lookup with an equal but distinct key compares the strings
    where the same object matches at once: the repair and whatif, which look switch names
    up millions of times, ran 10 to 15 % slower on a plan read back than on the plan built
    (32x32 torus, whatif's single failures: 69.7 s against 61.1 s). Anything not shaped as
    expected is left as it is for the validation to name."""
    switches = data.get("switches")
    if not isinstance(switches, dict):
        return
    name = {s: s for s in switches if isinstance(s, str)}
    get = name.get

    def same(x: object) -> object:
        return get(x, x) if isinstance(x, str) else x

    vlans, hosts, cabling = data.get("vlans"), data.get("hosts"), data.get("cabling")
    for v in vlans if isinstance(vlans, list) else ():
        if not isinstance(v, dict):
            continue
        for key in ("sources", "switches"):
            if isinstance(v.get(key), list):
                v[key] = [same(x) for x in v[key]]
        for ln in v["links"] if isinstance(v.get("links"), list) else ():
            if type(ln) is list and len(ln) == 2:          # in place: half a million on a 32x32 torus
                a, b = ln
                if type(a) is str and type(b) is str:
                    ln[0], ln[1] = get(a, a), get(b, b)
    for h in hosts.values() if isinstance(hosts, dict) else ():
        if isinstance(h, dict) and "switch" in h:
            h["switch"] = same(h["switch"])
    for c in cabling if isinstance(cabling, list) else ():
        if isinstance(c, dict):
            for key in ("a", "b"):
                if key in c:
                    c[key] = same(c[key])
    for sw in switches.values():
        for group in ("ports", "lags"):
            got = sw.get(group) if isinstance(sw, dict) else None
            for port in got.values() if isinstance(got, dict) else ():
                if isinstance(port, dict) and "neighbor" in port:
                    port["neighbor"] = same(port["neighbor"])
