"""YAML that parses but that vlanroute refuses on purpose, and YAML errors as one-line
UserErrors naming the line and column (the inventory and the Ansible inventory readers)."""

from __future__ import annotations

from typing import Any

import yaml

from vlanroute.errors import UserError


class RefusedYaml(yaml.constructor.ConstructorError):
    """YAML that parses but that vlanroute refuses on purpose, with the fix."""

    def __init__(self, problem: str, fix: str, mark: yaml.Mark | None) -> None:
        super().__init__(None, None, problem, mark)
        self.fix = fix


MERGE_TAG = "tag:yaml.org,2002:merge"


def refuse_merge_key(node: yaml.MappingNode) -> None:
    for key_node, _ in node.value:
        if key_node.tag == MERGE_TAG:
            raise RefusedYaml("a YAML merge key ('<<:') is not read by vlanroute (it is not part of YAML 1.2, "
                              "and merged keys would hide duplicates)",
                              "write the keys out in this mapping instead of merging them in", key_node.start_mark)


def refuse_vault(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    raise RefusedYaml("an Ansible Vault value ('!vault') cannot be read: vlanroute has no vault password "
                      "and needs no secret from this file",
                      "remove the encrypted value from this file (keep secrets in Ansible's own vars "
                      "files, or give vlanroute a copy without them)", node.start_mark)


def yaml_error(exc: yaml.YAMLError, file: str) -> UserError:
    """A YAML parse error as a UserError naming the line and column."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else None
    problem = getattr(exc, "problem", None) or str(exc)
    fix = exc.fix if isinstance(exc, RefusedYaml) else "correct the YAML syntax at that place"
    return UserError(f"YAML error: {problem}", file=file, field=where, fix=fix)
