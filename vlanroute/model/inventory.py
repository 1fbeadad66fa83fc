"""The inventory: one YAML file describing a cluster network, validated by pydantic v2.

Everything here is about the *shape* of the input. Whether a plan exists for it (ports,
limits, connectivity) is decided later in the pipeline, still as a UserError that names
the file and the field.
"""

from __future__ import annotations

import ipaddress
import os
import re
import string
import stat
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator,
                      model_validator)

from vlanroute.errors import UserError
from vlanroute.safeio.reading import load_yaml_limited, read_text_file, safe_quote
from vlanroute.model.yamlerrors import refuse_merge_key, refuse_vault, yaml_error
from vlanroute.model.hostcsv import read_hosts_csv
from vlanroute.model.overrides import apply_sets
from vlanroute.model.platforms import OVERRIDABLE_LIMITS, PLATFORMS
from vlanroute.model.portlist import MAX_PORTS, PortListError, parse_port_list
from vlanroute.model.operation import OperationSpec
from vlanroute.model.site import SiteSpec
# Strict patterns for every name that may reach a switch CLI, a shell script or a file
# name (vlanroute/names.py); the plan document uses the same ones.
from vlanroute.names import (IFACE_PATTERN, IFNAME_MAX, MAC_PATTERN, NAME_PATTERN, PORT_PATTERN,
                             management_address, pattern_size_problem)
from vlanroute.model.generators import neighbour_pairs, product

Name = Annotated[str, Field(pattern=NAME_PATTERN)]


def _interface_name(value: str) -> str:
    """A Linux interface name we can put on a command line unquoted: the kernel refuses more
    than 15 characters (IFNAMSIZ, include/uapi/linux/if.h), '/', ':' and white space."""
    if len(value) > IFNAME_MAX:
        raise ValueError(f"interface name '{value}' has {len(value)} characters, but Linux interface names "
                         f"have at most {IFNAME_MAX} (IFNAMSIZ 16 including the terminating NUL); "
                         "give the NIC's kernel name as `ip link` shows it")
    if not re.fullmatch(IFACE_PATTERN, value):
        raise ValueError(f"interface name '{value}': use letters, digits, '_' and '-' only, starting with "
                         "a letter (no dots: the learning sub-interfaces get names of their own)")
    return value


def _subif_prefix(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", value):
        raise ValueError(f"prefix '{value}': use letters, digits, '_' and '-' only, starting with a letter")
    if len(value) > IFNAME_MAX - 1:
        raise ValueError(f"prefix '{value}' has {len(value)} characters: with at least one digit of the "
                         f"VLAN id the sub-interface names would exceed Linux's {IFNAME_MAX} characters")
    return value


InterfaceName = Annotated[str, AfterValidator(_interface_name)]
PortName = Annotated[str, Field(pattern=PORT_PATTERN)]
VlanId = Annotated[int, Field(strict=True, ge=2, le=4094)]


def _port_spec(value: object) -> tuple[str, ...]:
    """A port list written as a pattern ("1/g1-1/g48,1/xg1-1/xg4") or a YAML list of names
    and ranges (model/portlist.py); every name matches PORT_PATTERN."""
    if isinstance(value, tuple):
        value = list(value)
    if not isinstance(value, (str, list)):
        raise ValueError("give ports as a string such as '1/g1-1/g48,1/xg1-1/xg4' or a list "
                         "such as [1/xg1, 1/xg2]")
    try:
        return parse_port_list(value)
    except PortListError as exc:
        raise ValueError(str(exc)) from None


# Ports given as a pattern or a list, parsed into names in their order.
PortSpec = Annotated[tuple[str, ...], BeforeValidator(_port_spec)]
Units = Annotated[int, Field(strict=True, ge=1, le=64)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class CustomLink(Strict):
    a: Name
    b: Name
    count: Annotated[int, Field(strict=True, ge=1, le=64)] | None = None
    # Exact ports, one [a_port, b_port] per cable; omitted: assigned by the planner.
    ports: list[tuple[PortName, PortName]] | None = None

    @model_validator(mode="after")
    def _ports_match_count(self) -> CustomLink:
        if self.a == self.b:
            raise ValueError(f"a link from switch '{self.a}' to itself is not allowed")
        if self.ports is not None and self.count is not None and len(self.ports) != self.count:
            raise ValueError(f"count is {self.count} but {len(self.ports)} port pairs are listed")
        return self


TopologyKind = Literal["tree", "ring", "mesh", "torus", "complete", "hyper-crossbar", "custom"]

# Refused before anything is built: a fabric this size cannot be planned, and building
# its graph alone would exhaust memory (a 4096 x 4096 torus: 16.7 million switches).
MAX_SWITCHES = 16_384
MAX_CABLES = 1_000_000
MAX_HOSTS = 1_000_000


def _sized_pattern(v: str) -> str:
    problem = pattern_size_problem(v)
    if problem:
        raise ValueError(f"pattern '{v[:80]}' is refused: {problem}")
    return v


def _placeholders_only(v: str, allowed: tuple[str, ...]) -> str:
    """A name pattern whose replacement fields are exactly `allowed` names, each with at most
    a format spec ({n:03d}): str.format would otherwise index or look up attributes
    ({index[0]}, {coord.x}) and fail on them at planning time."""
    try:
        fields = [(name, conversion, spec) for _, name, spec, conversion in string.Formatter().parse(v)
                  if name is not None]
    except ValueError as exc:
        raise ValueError(f"pattern '{v[:80]}' is not a format string: {exc}") from None
    for name, conversion, spec in fields:
        if name not in allowed or conversion is not None or "{" in (spec or ""):
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise ValueError(f"pattern '{v[:80]}' has the field {shown[:40]}: only "
                             + ", ".join("{" + a + "}" for a in allowed) + " are replaced, each with an "
                             "optional format such as {" + allowed[0] + ":03d}")
    return v


class TopologySpec(Strict):
    kind: TopologyKind
    dims: list[Annotated[int, Field(strict=True, ge=1, le=4096)]] | None = None
    size: Annotated[int, Field(strict=True, ge=1, le=65536)] | None = None
    fanout: Annotated[int, Field(strict=True, ge=1, le=256)] = 2
    links_per_pair: Annotated[int, Field(strict=True, ge=1, le=64)] = 1
    switch_name: str = "sw{index}"
    switches: list[Name] | None = None
    links: list[CustomLink] | None = None
    # Ports every switch gives its inter-switch cables, in order (e.g. 1/xg1-1/xg4); a
    # switch's own `inter_switch_ports` replaces it. Default: the highest free pool ports.
    inter_switch_ports: PortSpec | None = None

    @field_validator("switch_name")
    @classmethod
    def _switch_name_size(cls, v: str) -> str:
        return _placeholders_only(_sized_pattern(v), ("index", "index0", "coord"))

    @model_validator(mode="after")
    def _shape(self) -> TopologySpec:
        self._check_size()
        k = self.kind
        if k in ("mesh", "torus", "hyper-crossbar"):
            if not self.dims:
                raise ValueError(f"a {k} needs dims, e.g. dims: [4, 2]")
            if self.size is not None:
                raise ValueError(f"a {k} takes dims, not size")
        elif k in ("ring", "complete"):
            if (self.size is None) == (self.dims is None):
                raise ValueError(f"a {k} needs exactly one of size (e.g. size: 8) or dims (e.g. dims: [4, 2])")
        elif k == "tree":
            if self.size is None:
                raise ValueError("a tree needs size (number of switches), and optionally fanout")
        elif k == "custom":
            if not self.switches or self.links is None:
                raise ValueError("a custom topology needs switches (a list of names) and links")
        if k != "custom" and (self.switches is not None or self.links is not None):
            raise ValueError("switches and links are only for kind: custom")
        if "{index" not in self.switch_name and "{coord" not in self.switch_name:
            raise ValueError("switch_name must contain {index} or {coord}, e.g. 'sw{index}'")
        return self

    def _check_size(self) -> None:
        if self.kind == "custom" or (self.dims is None and self.size is None):
            return
        what = f"dims {self.dims}" if self.dims is not None else f"size {self.size}"
        switches = self.size if self.size is not None else product(list(self.dims or []))
        if switches > MAX_SWITCHES:
            raise ValueError(f"{what} gives {switches:,} switches; vlanroute plans at most "
                             f"{MAX_SWITCHES:,}")
        cables = neighbour_pairs(self.kind, self.dims, self.size, self.fanout) * self.links_per_pair
        if cables > MAX_CABLES:
            raise ValueError(f"a {self.kind} of {what} has {cables:,} inter-switch cables "
                             f"({self.links_per_pair} per pair); vlanroute plans at most {MAX_CABLES:,}")


class HostEntry(Strict):
    name: Name
    switch: Name
    port: PortName | None = None
    mac: str | None = None
    interface: InterfaceName | None = None
    # Extra columns of a hosts CSV (rack, serial, ...): kept with the host, never sent anywhere.
    attributes: dict[Annotated[str, Field(pattern=NAME_PATTERN)], str] = {}

    @field_validator("mac")
    @classmethod
    def _mac(cls, v: str | None) -> str | None:
        return normalise_mac(v) if v is not None else None


class HostsSpec(Strict):
    per_switch: Annotated[int, Field(strict=True, ge=0, le=4096)] | dict[Name, Annotated[int, Field(strict=True, ge=0, le=4096)]] | None = None
    count: Annotated[int, Field(strict=True, ge=0, le=1_000_000)] | None = None
    entries: list[HostEntry] | None = Field(default=None, alias="list")
    csv: str | None = None
    name: str = "node{n:03d}"
    interface: InterfaceName = "eth0"

    @field_validator("name")
    @classmethod
    def _name_size(cls, v: str) -> str:
        return _placeholders_only(_sized_pattern(v), ("n", "i", "switch"))

    @model_validator(mode="after")
    def _one_source(self) -> HostsSpec:
        given = [k for k in ("per_switch", "count", "entries", "csv") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of per_switch, count, list or csv"
                             + (f" (got {', '.join('list' if g == 'entries' else g for g in given)})" if given else ""))
        return self


class RoutingSpec(Strict):
    # A routing engine's name (routing/registry.py, `vlanroute algorithms`); default: the best
    # plan of every engine (routing/choose.py). Checked against the registry when planning
    # (plan/build.py), so this model does not import the routing stage.
    algorithm: str | None = None
    dimension_order: Literal["auto"] | list[Annotated[int, Field(strict=True, ge=0)]] = "auto"
    first_vlan: VlanId = 101
    vlan_ids: list[VlanId] | None = None
    root: Name | None = None
    # At most this many routing VLANs; default: the tightest hardware limit (plan/limits.py).
    max_vlans: Annotated[int, Field(strict=True, ge=1, le=4094)] | None = None
    # links: backup VLANs whose trees avoid each link of every VLAN's tree, for the fast
    # failover (plan/protection.py, docs/failures.md); they count in max_vlans.
    protection: Literal["none", "links"] = "none"

    @field_validator("vlan_ids")
    @classmethod
    def _unique(cls, v: list[int] | None) -> list[int] | None:
        if v is not None and len(set(v)) != len(v):
            dup = sorted({x for x in v if v.count(x) > 1})
            raise ValueError(f"duplicate VLAN ids {dup}")
        return v


class SwitchOverride(Strict):
    name: Name | None = None
    # An IP address or a DNS name (resolved when push and audit connect).
    mgmt: Annotated[str, AfterValidator(management_address)] | None = None
    ssh_port: Annotated[int, Field(strict=True, ge=1, le=65535)] = 22
    platform: Name | None = None
    reserved_ports: list[PortName] = []
    # This switch's own ports (a pattern or list, panel order), default pool and stack
    # units: a platform of its own, derived from its platform (see PlatformDef).
    ports: PortSpec | None = None
    auto_ports: PortSpec | None = None
    units: Units | None = None
    inter_switch_ports: PortSpec | None = None


class LearningSpec(Strict):
    pool: ipaddress.IPv4Network = ipaddress.IPv4Network("10.240.0.0/12")
    # system: sh + iproute2 (or busybox ip + ping) on the hosts, nothing to install; ip-link, vconfig, raw:
    # the frames come from `vlanroute learn`, which must then be installed on every host.
    method: Literal["system", "ip-link", "vconfig", "raw"] = "system"
    # Learning sub-interfaces are PREFIX + VLAN id, e.g. vr101 (whatever the NIC is called).
    interface_prefix: Annotated[str, AfterValidator(_subif_prefix)] = "vr"
    interval: Annotated[int, Field(strict=True, ge=60)] | None = None
    splay: Annotated[int, Field(strict=True, ge=0)] | None = None


class SettingsSpec(Strict):
    aging_time: Annotated[int, Field(strict=True, ge=1)] | None = None
    flow_control: bool = True
    eee: bool = False
    lag_hash: Literal["src-dst-ip-port", "src-dst-mac", "enhanced"] = "src-dst-ip-port"
    learning: LearningSpec = LearningSpec()
    # Networks already in use on the cluster; learning subnets must not overlap them.
    reserved_networks: list[ipaddress.IPv4Network] = []
    # How host ports carry the routing VLANs (vlanroute.model.bridge HOST_ATTACHMENTS):
    # auto = untagged where the switch can, trunk where it cannot.
    host_attachment: Literal["auto", "untagged", "trunk"] = "auto"


class PlatformDef(Strict):
    base: Name
    # A count N (the base's first prefix numbered 1..N, all in the default pool) or the
    # port list itself as a pattern or list (panel order).
    ports: int | tuple[str, ...] | None = None
    # The default pool (ports the planner assigns on its own); default: every port of
    # `ports`, or the base's pool when `ports` is not given.
    auto_ports: PortSpec | None = None
    units: Units | None = None
    # Free text, but one line of harmless characters: it may end up in a config comment.
    description: Annotated[str, Field(pattern=r"^[A-Za-z0-9 _.,()/+:-]{0,80}$")] | None = None
    max_vlans: Annotated[int, Field(strict=True, ge=2, le=4094)] | None = None
    vid_min: VlanId | None = None
    vid_max: VlanId | None = None
    mac_capacity: Annotated[int, Field(strict=True, ge=1)] | None = None
    aging_min: Annotated[int, Field(strict=True, ge=1)] | None = None
    aging_max: Annotated[int, Field(strict=True, ge=1)] | None = None
    aging_default: Annotated[int, Field(strict=True, ge=1)] | None = None
    max_lags: Annotated[int, Field(strict=True, ge=1)] | None = None
    max_lag_members: Annotated[int, Field(strict=True, ge=1)] | None = None
    # Capabilities no public source confirms for the base's family, confirmed by the user
    # for this switch (docs/platforms/<family>.md says what each means and how to check it).
    confirm: list[Literal["host-untagged-in-many-vlans"]] = []

    @field_validator("ports", mode="before")
    @classmethod
    def _ports(cls, v: object) -> object:
        if isinstance(v, int) and not isinstance(v, bool):
            if not 1 <= v <= MAX_PORTS:
                raise ValueError(f"a port count is 1 to {MAX_PORTS}, not {v}")
            return v
        return v if v is None else _port_spec(v)

    @model_validator(mode="after")
    def _ordered_limits(self) -> PlatformDef:
        # inverted bounds were accepted and then blamed on settings.aging_time or
        # routing.first_vlan ("outside 100..10 s"), fields the user never wrote
        for low, high in (("vid_min", "vid_max"), ("aging_min", "aging_max"),
                          ("aging_min", "aging_default"), ("aging_default", "aging_max")):
            a, b = getattr(self, low), getattr(self, high)
            if a is not None and b is not None and a > b:
                raise ValueError(f"{low} {a} is above {high} {b}: the lower bound goes in {low}")
        return self

    def port_count(self) -> int | None:
        return self.ports if isinstance(self.ports, int) else None

    def port_list(self) -> tuple[str, ...] | None:
        return self.ports if isinstance(self.ports, tuple) else None

    def limits(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in OVERRIDABLE_LIMITS if getattr(self, k) is not None}


class FailuresSpec(Strict):
    """What is down (docs/failures.md): read by `vlanroute repair --failures INVENTORY`,
    which checks every name against the published plan; `plan` and `render` plan the
    intact fabric and warn."""
    cables: list[str] = []        # switch:port
    pairs: list[str] = []         # a:b
    switches: list[str] = []


class Inventory(Strict):
    name: Name
    platform: Name = "powerconnect-6248"
    topology: TopologySpec
    hosts: HostsSpec
    routing: RoutingSpec = RoutingSpec()
    switches: dict[Name, SwitchOverride] = {}
    settings: SettingsSpec = SettingsSpec()
    platforms: dict[Name, PlatformDef] = {}
    failures: FailuresSpec | None = None
    # What the site states about its own switches (model/site.py).
    site: SiteSpec = SiteSpec()
    # How the site runs the pushed fabric: the watcher's policy (model/operation.py).
    operation: OperationSpec = OperationSpec()


# The ways sites write a MAC: colons or dashes between bytes (IEEE 802 / Windows), dots
# between groups of four hex digits (Cisco and Dell switch CLIs), or bare hex. Not
# netutils.mac.is_valid_mac: it takes three more forms (dots or colons elsewhere) that the
# inventory refuses; on these four both agree (tests/test_netutils_crosscheck.py).
_MAC_FORMS = (r"[0-9a-f]{2}(:[0-9a-f]{2}){5}", r"[0-9a-f]{2}(-[0-9a-f]{2}){5}",
              r"[0-9a-f]{4}(\.[0-9a-f]{4}){2}", r"[0-9a-f]{12}")


def normalise_mac(value: str) -> str:
    """Any of _MAC_FORMS, in any case, as lower-case colon form (00:13:c6:01:53:a7)."""
    import re

    v = value.strip().lower()
    if not any(re.fullmatch(form, v) for form in _MAC_FORMS):
        raise ValueError(f"'{value}' is not a MAC address (expected e.g. 00:1e:c9:aa:bb:cc, "
                         "00-1e-c9-aa-bb-cc or 001e.c9aa.bbcc)")
    digits = re.sub(r"[:.-]", "", v)
    v = ":".join(digits[i:i + 2] for i in range(0, 12, 2))
    assert re.fullmatch(MAC_PATTERN, v)
    # A host's own address is a unicast one: switches never learn a group address (IEEE
    # 802: the first octet's lowest bit set, broadcast among them) nor 00:00:00:00:00:00.
    if int(digits[:2], 16) & 1:
        kind = "the broadcast address" if digits == "f" * 12 else "a multicast (group) address"
        raise ValueError(f"'{value}' is {kind}, not a host's own MAC (the first octet must be even); "
                         "give the MAC of the host's interface (ip link show)")
    if digits == "0" * 12:
        raise ValueError(f"'{value}' is all zeros, not a host's MAC; give the MAC of the host's "
                         "interface (ip link show), or leave the field out")
    return v


# --------------------------------------------------------------------------- loading


class _UniqueKeyLoader(yaml.SafeLoader):
    """A SafeLoader that refuses duplicate keys: PyYAML silently keeps the last one."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    refuse_merge_key(node)
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key_node, yaml.ScalarNode):
            # YAML's complex keys (`? [a, b]`): no inventory field is named by a list or a mapping
            raise yaml.constructor.ConstructorError(
                None, None, "a key must be a name or a number, not a list or a mapping", key_node.start_mark)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key '{key}' (first on line {seen[key] + 1})", key_node.start_mark)
        seen[key] = key_node.start_mark.line
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_UniqueKeyLoader.add_constructor("!vault", refuse_vault)


def read_yaml(path: Path) -> Any:
    text = read_text_file(path, what="inventory", fix="check the path of the inventory")
    try:
        return load_yaml_limited(_UniqueKeyLoader, text, str(path))
    except yaml.YAMLError as exc:
        raise yaml_error(exc, str(path)) from None


_FIXES = {
    "extra_forbidden": "remove this key or correct its spelling (see the inventory reference in README.md)",
    "missing": "add this field",
    "literal_error": "use one of the values listed",
    "string_pattern_mismatch": "use letters, digits, '_', '.', '-' only, starting with a letter",
    "int_parsing": "give a whole number",
    "int_type": "give a whole number",
    "greater_than_equal": "give a larger value",
    "less_than_equal": "give a smaller value",
}


_PORT_FIELDS = ("ports", "auto_ports", "inter_switch_ports")


def _format_validation(exc: ValidationError, file: str, set_paths: list[str]) -> UserError:
    lines = []
    for err in exc.errors()[:8]:
        # A key that is no inventory key is shown only if it is harmless: the file might be
        # /etc/shadow, whose lines YAML reads as keys.
        loc = ".".join("list" if p == "entries" else (str(p) if safe_quote(str(p), 63) else "(a key not shown)")
                       for p in err["loc"]
                       if not (isinstance(p, str) and ("[" in p or p in ("function-after",))))
        source = file
        for set_path in set_paths:
            if loc == set_path or loc.startswith(set_path + "."):
                source = f"--set {set_path}"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        line = f"{source}: {loc or '(top level)'}: {msg}"
        fix = _FIXES.get(err["type"])
        if err["type"] == "value_error" and loc.rsplit(".", 1)[-1] == "mgmt":
            fix = "give the switch's management IPv4 or IPv6 address, or its DNS name (sw1.mgmt.example.org)"
        if err["type"] == "value_error" and loc.rsplit(".", 1)[-1] in _PORT_FIELDS:
            fix = ("write port names and ranges FIRST-LAST separated by commas, e.g. "
                   "'1/g1-1/g48,1/xg1-1/xg4', or a list of them (see the inventory reference in README.md)")
        if fix:
            line += f"\n  fix: {fix}"
        lines.append(line)
    more = len(exc.errors()) - len(lines)
    text = "\n".join(lines) + (f"\n({more} more errors)" if more > 0 else "")
    return UserError(text)


def load_inventory(path: str | Path, sets: tuple[str, ...] | list[str] = ()) -> LoadedInventory:
    """Read, override (--set) and validate one inventory file."""
    p = Path(path)
    _refuse_plan_document(p)
    raw = read_yaml(p)
    if not isinstance(raw, dict):
        raise UserError("the inventory must be a YAML mapping (key: value lines)", file=str(p))
    raw, set_paths = apply_sets(raw, list(sets))
    try:
        inv = Inventory.model_validate(raw)
    except ValidationError as exc:
        raise _format_validation(exc, str(p), set_paths) from None
    for pname, pdef in inv.platforms.items():
        if pname in PLATFORMS:
            raise UserError(f"'{pname}' is a built-in platform name", file=str(p), field=f"platforms.{pname}",
                            fix="give the derived platform a name of its own")
        if pdef.base not in PLATFORMS:
            raise UserError(f"unknown base platform '{pdef.base}'", file=str(p), field=f"platforms.{pname}.base",
                            fix=f"use one of: {', '.join(sorted(PLATFORMS))}")
    hosts_csv, lines = _read_hosts_csv(p, inv.hosts.csv) if inv.hosts.csv else (None, None)
    return LoadedInventory(path=p, spec=inv, hosts_csv=hosts_csv, hosts_csv_lines=lines,
                           set_paths=tuple(set_paths))


def _refuse_plan_document(path: Path) -> None:
    """plan.json is valid YAML: without this check it would be read as an inventory with
    hundreds of unknown keys (and a 30 MB plan would take minutes to parse as YAML)."""
    import re
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)      # a FIFO must not block here
    except OSError:
        return                                   # read_yaml reports it
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return                               # read_yaml refuses it
        head = os.read(fd, 4096).decode("utf-8", "replace")
    except OSError:
        return
    finally:
        os.close(fd)
    found = re.match(r'\s*\{\s*"format"\s*:\s*"(vlanroute-plan/\d+)"', head)
    if found:
        raise UserError(f"this is a rendered plan ({found.group(1)}, the plan.json that `vlanroute render` "
                        "writes), not an inventory", file=str(path),
                        fix="give the inventory YAML the plan was made from; the commands that read a "
                            "rendered plan (verify, push, audit, save, rollback, cabling check, emulate, "
                            "repair, watch, lab up, export nautobot) take its OUTDIR")


class LoadedInventory:
    """A validated inventory with where it came from (for messages) and its host CSV read."""

    def __init__(self, path: Path, spec: Inventory, hosts_csv: list[HostEntry] | None,
                 hosts_csv_lines: list[int] | None = None, label: str | None = None,
                 set_paths: tuple[str, ...] = ()) -> None:
        self.path = path
        self.set_paths = set_paths                  # the fields --set gave, for messages
        self.spec = spec
        self.hosts_csv = hosts_csv
        self.hosts_csv_lines = hosts_csv_lines      # the line of each row, for messages
        self.label = label                          # where an inventory built in memory came from

    @property
    def file(self) -> str:
        return self.label or str(self.path)

    def blame_sets(self, err: UserError) -> UserError:
        """`err` (about this inventory) naming the --set that gave its field (or a section
        holding it), as a validation error does: the value is on the command line, not in the
        file. A --set of a part of the field (hosts.count for `hosts`) is not named: the rest
        of the field is the file's."""
        field = err.field or ""
        if err.file != self.file or not field:
            return err
        for path in self.set_paths:
            if field == path or field.startswith(path + "."):
                err.file = f"--set {path}"
                err.args = (err.render(),)
        return err


def inventory_from_mapping(raw: dict[str, Any], source: str) -> LoadedInventory:
    """Validate an inventory an importer built in memory (model/nautobot.py) exactly as a
    file's; `source` names it in messages. It has no file, so no hosts CSV."""
    try:
        inv = Inventory.model_validate(raw)
    except ValidationError as exc:
        raise _format_validation(exc, source, []) from None
    return LoadedInventory(path=Path("."), spec=inv, hosts_csv=None, label=source)


def _read_hosts_csv(inv_path: Path, rel: str) -> tuple[list[HostEntry], list[int]]:
    csv_path = (inv_path.parent / rel) if not Path(rel).is_absolute() else Path(rel)
    try:
        text = read_text_file(csv_path, what="hosts CSV", fix="give a path relative to the inventory file, "
                                                              "of a CSV saved as UTF-8")
    except UserError as exc:
        raise UserError(exc.message, file=f"{inv_path}: hosts.csv {csv_path}", fix=exc.fix) from None
    return read_hosts_csv(csv_path, text, HostEntry)
