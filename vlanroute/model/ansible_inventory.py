"""Read an Ansible inventory (YAML or INI) into groups, hosts and each host's variables.

Only what an inventory file says, as Ansible documents it ("How to build your inventory",
docs.ansible.com): groups with `hosts`, `vars` and `children` (YAML), or `[group]`,
`[group:vars]` and `[group:children]` sections with `key=value` host variables (INI); host
ranges such as `node[01:16]` and `sw[a:d]`; `group_vars/<group>.yml` and
`host_vars/<host>.yml` beside the file. Variables merge as Ansible merges them: group `all`
first, then parent groups before their children (by depth, then name), host variables last.
The fallback when ansible-core is not installed: `vlanroute import ansible` otherwise
reads `ansible-inventory --list` (model/ansible_list.py), plugins and dynamic inventories
included.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re
import shlex
from pathlib import Path
from typing import Any

import yaml

from vlanroute.names import management_address
from vlanroute.errors import UserError
from vlanroute.safeio.reading import load_yaml_limited, read_text_file, safe_quote
from vlanroute.model.yamlerrors import yaml_error

VAULT_KEY = "__ansible_vault"          # how ansible-inventory --list prints a value it did not decrypt
VAULT_HEADER = "$ANSIBLE_VAULT;"       # the first line of a vault-encrypted file
_RANGE = re.compile(r"\[([0-9]+|[a-z]):([0-9]+|[a-z])(?::([0-9]+))?\]")


@dataclass
class Group:
    name: str
    hosts: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    vars: dict[str, Any] = field(default_factory=dict)


@dataclass
class AnsibleInventory:
    source: str
    groups: dict[str, Group] = field(default_factory=dict)
    host_vars: dict[str, dict[str, Any]] = field(default_factory=dict)   # in first-seen order
    notes: list[str] = field(default_factory=list)     # what was skipped (encrypted files)

    def group(self, name: str) -> Group:
        return self.groups.setdefault(name, Group(name))

    def add_host(self, group: str, host: str, variables: dict[str, Any] | None = None) -> None:
        g = self.group(group)
        if host not in g.hosts:
            g.hosts.append(host)
        self.host_vars.setdefault(host, {}).update(variables or {})

    def members(self, group: str) -> list[str]:
        """The hosts of `group` and of its children, recursively, in inventory order."""
        if group not in self.groups:
            raise KeyError(group)
        seen: dict[str, None] = {}
        stack: list[str] = []

        def visit(name: str) -> None:
            if name in stack:
                return                             # a cycle: Ansible refuses it; we stop
            stack.append(name)
            g = self.groups.get(name)
            if g is not None:
                seen.update(dict.fromkeys(g.hosts))
                for child in g.children:
                    visit(child)
            stack.pop()

        if group == "all":
            return list(self.host_vars)
        visit(group)
        return list(seen)

    def _depths(self) -> dict[str, int]:
        depth = {"all": 0}
        changed = True
        while changed:
            changed = False
            for g in self.groups.values():
                for child in g.children:
                    d = depth.get(g.name, 1) + 1
                    if depth.get(child, 1) < d and d < 64:
                        depth[child] = d
                        changed = True
        return depth

    def variables(self, host: str) -> dict[str, Any]:
        depth = self._depths()
        mine = [g for g in self.groups.values() if host in self.members(g.name)]
        out: dict[str, Any] = dict(self.groups["all"].vars) if "all" in self.groups else {}
        for g in sorted((g for g in mine if g.name != "all"), key=lambda g: (depth.get(g.name, 1), g.name)):
            out.update(g.vars)
        out.update(self.host_vars.get(host, {}))
        return out


def expand(pattern: str) -> list[str]:
    """`node[01:03]` -> node01, node02, node03 (leading zeros kept); `sw[a:c]`; stride `[1:9:2]`."""
    m = _RANGE.search(pattern)
    if not m:
        return [pattern]
    lo, hi, stride = m.group(1), m.group(2), int(m.group(3) or 1)
    head, tail = pattern[:m.start()], pattern[m.end():]
    if lo.isdigit() != hi.isdigit():
        raise ValueError(f"range [{lo}:{hi}] mixes a number and a letter")
    if lo.isdigit():
        width = len(lo) if lo.startswith("0") else 0
        values = [str(i).zfill(width) for i in range(int(lo), int(hi) + 1, stride)]
    else:
        values = [chr(c) for c in range(ord(lo), ord(hi) + 1, stride)]
    return [name for v in values for name in expand(head + v + tail)]


def _scalar(text: str) -> Any:
    """An INI value: numbers and booleans as YAML reads them, anything else as text."""
    try:   # within the limits: one INI word can hold a whole alias bomb ([&a[x,x],[*a,*a]])
        value = load_yaml_limited(yaml.SafeLoader, text, "an INI value")
    except (yaml.YAMLError, UserError):
        return text
    return value if isinstance(value, (int, float, bool, str)) else text


def _key_values(words: list[str], where: str) -> dict[str, Any]:
    out = {}
    for w in words:
        if "=" not in w:
            raise UserError(f"'{w}' is not a key=value host variable", file=where,
                            fix="write host variables as key=value after the host name")
        k, v = w.split("=", 1)
        out[k] = _scalar(v)
    return out


def read_ini(path: Path, text: str) -> AnsibleInventory:
    inv = AnsibleInventory(str(path))
    inv.group("all")
    section, kind = "ungrouped", "hosts"
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        where = f"{path}: line {lineno}"
        if line.startswith("["):
            m = re.fullmatch(r"\[([^\]:\s]+)(?::(vars|children))?\]", line)
            if not m:
                raise UserError(f"bad section header {line!r}", file=str(path), field=f"line {lineno}",
                                fix="use [group], [group:vars] or [group:children]")
            section, kind = m.group(1), m.group(2) or "hosts"
            inv.group(section)
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise UserError(f"cannot split the line: {exc}", file=str(path), field=f"line {lineno}") from None
        if not words:
            continue
        if kind == "vars":
            key, _, value = line.partition("=")
            inv.group(section).vars[key.strip()] = _scalar(value.strip().strip("'\""))
        elif kind == "children":
            child = words[0]
            inv.group(child)
            if child not in inv.group(section).children:
                inv.group(section).children.append(child)
        else:
            try:
                names = expand(words[0])
            except ValueError as exc:
                raise UserError(str(exc), file=str(path), field=f"line {lineno}") from None
            variables = _key_values(words[1:], where)
            for name in names:
                inv.add_host(section, name, variables)
    return inv


def read_yaml_inventory(path: Path, data: Any) -> AnsibleInventory:
    inv = AnsibleInventory(str(path))
    inv.group("all")

    def group(name: str, body: Any, trail: str) -> None:
        g = inv.group(name)
        if body is None:
            return
        if not isinstance(body, dict):
            raise UserError("a group must be a mapping with hosts, vars and children", file=str(path),
                            field=trail)
        unknown = set(body) - {"hosts", "vars", "children"}
        if unknown:
            raise UserError(f"unknown key(s) {', '.join(sorted(unknown))} in group {name}", file=str(path),
                            field=trail, fix="a group has only hosts, vars and children")
        for pattern, hvars in (body.get("hosts") or {}).items():
            if hvars is not None and not isinstance(hvars, dict):
                raise UserError(f"host {pattern}: its variables must be a mapping", file=str(path),
                                field=f"{trail}.hosts.{pattern}")
            try:
                names = expand(str(pattern))
            except ValueError as exc:
                raise UserError(str(exc), file=str(path), field=f"{trail}.hosts.{pattern}") from None
            for host in names:
                inv.add_host(name, host, hvars)
        g.vars.update(body.get("vars") or {})
        for child, child_body in (body.get("children") or {}).items():
            if child not in g.children:
                g.children.append(child)
            group(child, child_body, f"{trail}.children.{child}")

    if not isinstance(data, dict):
        raise UserError("an Ansible YAML inventory is a mapping of groups (usually 'all:')", file=str(path))
    for name, body in data.items():
        group(str(name), body, str(name))
    return inv


def _vars_file(folder: Path, name: str, notes: list[str]) -> dict[str, Any]:
    for suffix in ("", ".yml", ".yaml"):
        p = folder / f"{name}{suffix}"
        if p.is_file():
            text = read_text_file(p, what="Ansible variables file")
            if text.lstrip().startswith(VAULT_HEADER):
                # A whole vault-encrypted file (`ansible-vault encrypt`): usually the become or
                # SSH passwords, which vlanroute never needs. Skipped, and said: a variable
                # vlanroute needs that only this file held is then named as missing.
                notes.append(f"{p}: vault-encrypted, not read (vlanroute has no vault password; a "
                             "variable it needs must be in clear text elsewhere)")
                return {}
            data = _load_yaml(text, str(p)) or {}
            if not isinstance(data, dict):
                raise UserError("a variables file must be a mapping", file=str(p))
            return data
    return {}


class _AnsibleLoader(yaml.SafeLoader):
    """SafeLoader (merge keys included, as Ansible reads them) that reads a !vault value as
    the marker `ansible-inventory --list` prints for one it cannot decrypt (is_vaulted):
    skipped where vlanroute does not need it, named where it does (to_vlanroute)."""


def _vaulted(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    return {VAULT_KEY: "(encrypted, not read)"}          # the ciphertext is never kept


_AnsibleLoader.add_constructor("!vault", _vaulted)


def _load_yaml(text: str, file: str) -> Any:
    try:
        return load_yaml_limited(_AnsibleLoader, text, file)
    except yaml.YAMLError as exc:
        raise yaml_error(exc, file) from None


def read_ansible_inventory(path: Path) -> AnsibleInventory:
    text = read_text_file(path, what="Ansible inventory")
    if text.lstrip().startswith(VAULT_HEADER):
        raise UserError("the inventory file itself is vault-encrypted: vlanroute has no vault password",
                        file=str(path), fix="give vlanroute a copy in clear text (it needs the hosts' "
                                            "switch, port and MAC, no secret), e.g. `ansible-vault view`")
    data: Any = None
    first = next((l.strip() for l in text.splitlines() if l.strip() and not l.lstrip().startswith(("#", ";"))), "")
    if not first.startswith("[") and (path.suffix in (".yml", ".yaml", ".json") or first.endswith(":")
                                      or first.startswith(("{", "---"))):
        data = _load_yaml(text, str(path))
    inv = read_yaml_inventory(path, data) if data is not None else read_ini(path, text)
    # group_vars/ and host_vars/ beside the inventory, as Ansible reads them.
    for g in inv.groups.values():
        g.vars.update(_vars_file(path.parent / "group_vars", g.name, inv.notes))
    for host in inv.host_vars:
        inv.host_vars[host].update(_vars_file(path.parent / "host_vars", host, inv.notes))
    return inv


@dataclass(frozen=True)
class VarNames:
    """Which Ansible variables hold what vlanroute needs of a host or a switch."""
    switch: str = "switch"
    port: str = "switch_port"
    mac: str = "mac"
    interface: str = "vlanroute_interface"
    mgmt: str = "ansible_host"


@dataclass
class Imported:
    hosts: list[dict[str, str]]            # hosts.list entries, in inventory order
    switches: dict[str, dict[str, str]]     # switch -> {"mgmt": address}
    errors: list[str]


def is_vaulted(value: Any) -> bool:
    """A value `ansible-inventory --list` prints for a '!vault' variable it cannot decrypt
    (and the static reader makes of one)."""
    return isinstance(value, dict) and VAULT_KEY in value


def to_vlanroute(inv: AnsibleInventory, host_groups: list[str], switch_groups: list[str],
                 names: VarNames = VarNames()) -> Imported:
    """The hosts section (and switches' management addresses) of a vlanroute inventory.
    Every value is checked as the inventory checks it (names, MACs, addresses)."""
    from pydantic import ValidationError
    from vlanroute.model.inventory import HostEntry

    def members(group: str) -> list[str]:
        try:
            return inv.members(group)
        except KeyError:
            raise UserError(f"no group '{group}' in the Ansible inventory", file=inv.source,
                            fix="groups there: " + ", ".join(
                                (safe_quote(g, 63) or "(a name not shown)").strip("'") for g in sorted(inv.groups))) from None

    errors: list[str] = []
    hosts: list[dict[str, str]] = []
    seen: set[str] = set()
    for group in host_groups:
        for host in members(group):
            if host in seen:
                continue
            seen.add(host)
            v = inv.variables(host)
            record = {"name": host}
            vaulted = False
            for key, var in (("switch", names.switch), ("port", names.port), ("mac", names.mac),
                             ("interface", names.interface)):
                if is_vaulted(v.get(var)):
                    errors.append(f"host {host}: variable '{var}' is an Ansible Vault value: vlanroute has no "
                                  "vault password (it is no secret: keep it in clear text)")
                    vaulted = True
                elif v.get(var) not in (None, ""):
                    record[key] = str(v[var])
            if vaulted:
                continue
            if "switch" not in record:
                errors.append(f"host {host}: no variable '{names.switch}' (the switch it is cabled to)")
                continue
            try:
                entry = HostEntry.model_validate(record)
            except ValidationError as exc:
                for err in exc.errors():
                    errors.append(f"host {host}: {'.'.join(map(str, err['loc']))}: "
                                  f"{err['msg'].removeprefix('Value error, ')}")
                continue
            hosts.append({k: val for k, val in entry.model_dump(exclude_none=True).items() if k != "attributes"})
    switches: dict[str, dict[str, str]] = {}
    for group in switch_groups:
        for sw in members(group):
            # Without the variable, the inventory host name is the switch's DNS name (as
            # Ansible itself connects to it); resolved when push and audit connect.
            if is_vaulted(inv.variables(sw).get(names.mgmt)):
                errors.append(f"switch {sw}: variable '{names.mgmt}' is an Ansible Vault value: vlanroute has "
                              "no vault password (it is no secret: keep it in clear text)")
                continue
            address = str(inv.variables(sw).get(names.mgmt) or sw)
            try:
                switches[sw] = {"mgmt": management_address(address)}
            except ValueError as exc:
                errors.append(f"switch {sw}: {exc} (variable '{names.mgmt}')")
    return Imported(hosts, switches, errors)
