"""An Ansible inventory as ansible-core itself reads it: `ansible-inventory -i SOURCE --list`.

That is Ansible's own parser, with every inventory plugin and dynamic inventory script the
site uses, its variable precedence, group_vars/ and host_vars/. Its JSON (documented with
`ansible-inventory --list`): one object per group with `hosts` and `children`, `all` at the
top, and `_meta.hostvars` with each host's variables already merged. When ansible-core is
not installed, vlanroute reads static YAML and INI files itself (model/ansible_inventory.py)
and says so; a dynamic source then needs ansible-core (the `ansible` extra).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from vlanroute.errors import UserError
from vlanroute.model.ansible_inventory import AnsibleInventory, Group, read_ansible_inventory
from vlanroute.safeio.reading import load_yaml_limited, read_text_file

TIMEOUT_S = 300


def ansible_inventory_command() -> str | None:
    """`ansible-inventory` on PATH, else beside this Python (a venv's bin/), else None."""
    found = shutil.which("ansible-inventory")
    if found:
        return found
    beside = Path(sys.executable).parent / "ansible-inventory"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None


class _TolerantLoader(yaml.SafeLoader):
    """Reads an inventory only to measure it: Ansible's tags (!vault, !unsafe) as plain text."""


_TolerantLoader.add_multi_constructor("!", lambda loader, suffix, node: None)


VARS_FOLDERS = ("group_vars", "host_vars")
MAX_VARS_FILES = 10_000
# Files of an inventory folder Ansible skips: its INVENTORY_IGNORE_EXTS default, REJECT_EXTS
# plus .orig .ini .cfg .retry (ansible-core's config/base.yml and constants.py).
IGNORED_SUFFIXES = (".pyc", ".pyo", ".swp", ".bak", "~", ".rpm", ".md", ".txt", ".rst",
                    ".orig", ".ini", ".cfg", ".retry")


def precheck_static(source: Path) -> None:
    """Every static file Ansible will read for SOURCE within vlanroute's limits (a regular
    file, size, nesting depth, YAML aliases: docs/limits.md) before Ansible reads it: the
    inventory file (or the static files of an inventory folder) and the group_vars/ and
    host_vars/ beside it, which Ansible reads with it (an alias bomb there would keep
    ansible-inventory busy until its timeout). Executable sources are dynamic, Ansible's to
    run. YAML errors are left to Ansible's message."""
    base = source if source.is_dir() else source.parent
    files: list[tuple[Path, str]] = []
    try:
        if source.is_dir():
            files += [(p, "Ansible inventory") for p in sorted(source.iterdir())
                      if not p.name.startswith(".") and not p.name.endswith(IGNORED_SUFFIXES)]
        else:
            files.append((source, "Ansible inventory"))
        for folder in (base / name for name in VARS_FOLDERS):
            if folder.is_dir() and not folder.is_symlink():
                found = sorted(p for p in folder.rglob("*") if not p.name.startswith("."))
                files += [(p, "Ansible variables file") for p in found[:MAX_VARS_FILES]]
    except OSError:
        pass                                       # unreadable folders: Ansible's message
    for path, what in files:
        if path.is_file() and not os.access(path, os.X_OK):
            _precheck_file(path, what)


def _precheck_file(source: Path, what: str) -> None:
    text = read_text_file(source, what=what)
    first = next((line.strip() for line in text.splitlines()
                  if line.strip() and not line.lstrip().startswith(("#", ";"))), "")
    if re.fullmatch(r"\[[^\[\]]+\]", first):
        return                                     # an INI section header: INI does not nest
    try:
        load_yaml_limited(_TolerantLoader, text, str(source))
    except yaml.YAMLError:
        pass


def run_ansible_inventory(source: Path, command: str) -> AnsibleInventory:
    """The inventory `ansible-inventory -i SOURCE --list` prints; UserError with Ansible's own
    message if it fails or finds nothing."""
    precheck_static(source)
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0",
           "ANSIBLE_INVENTORY_UNPARSED_FAILED": "1", "ANSIBLE_DEPRECATION_WARNINGS": "0"}
    try:
        done = subprocess.run([command, "-i", str(source), "--list"], capture_output=True, text=True,
                              timeout=TIMEOUT_S, env=env, check=False)
    except subprocess.TimeoutExpired:
        raise UserError(f"ansible-inventory did not answer within {TIMEOUT_S} s", file=str(source),
                        fix="check the dynamic inventory (its API or script) with "
                            f"`ansible-inventory -i {source} --list`") from None
    except OSError as exc:
        raise UserError(f"cannot run {command}: {exc.strerror}", file=str(source)) from None
    if done.returncode != 0 and _needs_vault(done.stderr) and source.is_file() and not os.access(source, os.X_OK):
        # Ansible stops at the first value it cannot decrypt (a whole encrypted group_vars
        # file, usually the become password), though vlanroute needs none of them: read the
        # static file itself, which skips what is encrypted and names it where needed.
        inv = read_ansible_inventory(source)
        inv.notes.insert(0, "ansible-inventory needs a vault password for an encrypted value or file; read "
                            f"{source} as a static YAML/INI inventory instead (without Ansible's plugins)")
        return inv
    if done.returncode != 0:
        why = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        raise UserError(f"ansible-inventory failed: {why[-1] if why else f'exit code {done.returncode}'}",
                        file=str(source), fix=f"run `ansible-inventory -i {source} --list` to see Ansible's "
                                              "own messages, and correct the inventory")
    try:
        data = json.loads(done.stdout)
    except ValueError:
        raise UserError("ansible-inventory printed no JSON", file=str(source)) from None
    return from_list(str(source), data)


def _needs_vault(stderr: str) -> bool:
    """Ansible's refusal to go on without a vault password (ansible-core's messages)."""
    return "no vault secrets" in stderr or "Decryption failed" in stderr


def from_list(source: str, data: Any) -> AnsibleInventory:
    """`ansible-inventory --list` JSON -> groups and each host's (already merged) variables."""
    if not isinstance(data, dict):
        raise UserError("ansible-inventory printed no inventory object", file=source)
    inv = AnsibleInventory(source)
    hostvars = data.get("_meta", {}).get("hostvars", {}) if isinstance(data.get("_meta"), dict) else {}
    for name, body in data.items():
        if name == "_meta" or not isinstance(body, dict):
            continue
        group = inv.groups.setdefault(name, Group(name))
        group.children = [str(c) for c in body.get("children", [])]
        group.vars = dict(body.get("vars", {})) if isinstance(body.get("vars"), dict) else {}
        for host in body.get("hosts", []):
            inv.add_host(name, str(host), dict(hostvars.get(host, {})))
    for child in [c for g in list(inv.groups.values()) for c in g.children]:
        inv.groups.setdefault(child, Group(child))
    return inv
