"""`--set key.path=value`: override any inventory field from the command line.

The value is read as YAML, so `--set topology.dims=[8,8]` gives a list and
`--set settings.flow_control=false` a boolean.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import yaml

from vlanroute.errors import UserError
from vlanroute.safeio.reading import load_yaml_limited

MAX_SET_VALUE = 64 * 1024       # a value typed on a command line; larger ones belong in the file

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$|^\d+$")


def apply_sets(raw: dict[str, Any], sets: list[str]) -> tuple[dict[str, Any], list[str]]:
    """Return a copy of `raw` with every `key.path=value` applied, and the paths that were set."""
    out = copy.deepcopy(raw)
    paths: list[str] = []
    for item in sets:
        if "=" not in item:
            raise UserError(f"'{item}' has no '='", field="--set",
                            fix="write --set key.path=value, e.g. --set topology.links_per_pair=6")
        path, text = item.split("=", 1)
        keys = path.strip().split(".")
        if not path.strip() or not all(_KEY.match(k) for k in keys):
            raise UserError(f"'{path}' is not a key path", field="--set",
                            fix="use dotted keys, e.g. topology.dims or switches.sw1.mgmt")
        if len(text) > MAX_SET_VALUE:
            raise UserError(f"the value is {len(text):,} characters long, more than {MAX_SET_VALUE:,}",
                            field=f"--set {path}", fix="set such a value in the inventory file instead")
        try:
            value = load_yaml_limited(yaml.SafeLoader, text, "--set", path) if text.strip() else None
        except yaml.YAMLError as exc:
            raise UserError(f"the value is not valid YAML: {exc}", field=f"--set {path}",
                            fix="quote the value, or correct its YAML syntax") from None
        node: Any = out
        for depth, key in enumerate(keys[:-1]):
            node = _step(node, key, create=True, where=".".join(keys[:depth + 1]))
        last = keys[-1]
        if isinstance(node, list):
            idx = _index(node, last, ".".join(keys))
            node[idx] = value
        elif isinstance(node, dict):
            node[last] = value
        else:
            raise UserError(f"'{'.'.join(keys[:-1])}' is not a mapping, cannot set '{last}' in it", field=f"--set {path}")
        paths.append(path)
    return out, paths


def _step(node: Any, key: str, *, create: bool, where: str) -> Any:
    if isinstance(node, list):
        return node[_index(node, key, where)]
    if not isinstance(node, dict):
        raise UserError(f"'{where}' goes through a value that is not a mapping", field="--set")
    if key not in node or node[key] is None:
        node[key] = {}
    return node[key]


def _index(node: list[Any], key: str, where: str) -> int:
    if not key.isdigit() or int(key) >= len(node):
        raise UserError(f"'{key}' is not an index of the list at '{where}' (it has {len(node)} items)",
                        field="--set")
    return int(key)
