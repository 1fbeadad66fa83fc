"""Check the inventory's `site.acknowledged_syntax` against the families' unconfirmed items.

An acknowledgment names a family and items of its `unconfirmed` (or
`unconfirmed_untagged_hosts`) lists by `syntax_key`; an unknown family, or an item that is
not unconfirmed (already confirmed, misspelt, or from another family), is a UserError naming
the field with the accepted names as the fix: a stale acknowledgment must not silently stop
meaning anything. Render leaves the acknowledged items out of its warning
(render/write.syntax_warnings); the report lists them with who checked and when.
"""

from __future__ import annotations

from vlanroute.drivers import FAMILIES
from vlanroute.drivers.family import syntax_key
from vlanroute.errors import UserError
from vlanroute.model.inventory import LoadedInventory


def check_acknowledgments(inv: LoadedInventory) -> None:
    """UserError for the first acknowledgment that names no family or no unconfirmed item."""
    seen: dict[tuple[str, str], int] = {}
    for i, ack in enumerate(inv.spec.site.acknowledged_syntax):
        where = f"site.acknowledged_syntax.{i}"
        family = FAMILIES.get(ack.family)
        if family is None:
            raise UserError(f"no switch family {ack.family!r}", file=inv.file, field=f"{where}.family",
                            fix="use one of: " + ", ".join(sorted(FAMILIES)))
        items = {syntax_key(item) for item in family.unconfirmed + family.unconfirmed_untagged_hosts}
        for j, command in enumerate(ack.commands):
            key = syntax_key(command)
            if key not in items:
                fix = ("the family has no unconfirmed syntax: remove this acknowledgment" if not items else
                       "name the items as render's warning lists them (the text before any parenthesis): "
                       + "; ".join(f"'{k}'" for k in sorted(items)))
                raise UserError(f"{command!r} is not a command {family.title} marks unconfirmed "
                                f"(docs/platforms/{family.name}.md)", file=inv.file,
                                field=f"{where}.commands.{j}", fix=fix)
            if (family.name, key) in seen:
                raise UserError(f"'{key}' is already acknowledged in site.acknowledged_syntax."
                                f"{seen[family.name, key]}", file=inv.file, field=f"{where}.commands.{j}",
                                fix="acknowledge each item once (one entry per check)")
            seen[family.name, key] = i

