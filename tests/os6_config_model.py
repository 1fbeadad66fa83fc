"""What Ansible's `dellemc.os6.os6_config` (src=FILE, match=line, replace=line, the defaults)
would send to a switch, modelled from its source for the docs/ansible.md idempotence test.

Written by us from reading (not copied from):
- ansible-collections/dellemc.os6 at eb8fee1, plugins/modules/os6_config.py: `main()` parses
  the candidate (src) and the running config with the collection's `NetworkConfig`, takes
  `candidate.difference(running, match='line', replace='line')`, and sends
  `dumps(diff, 'commands')`, i.e. each diff item's text, after `configure terminal`
  (module_utils/network/os6.py `load_config`); nothing is sent when the diff is empty.
- the same commit, plugins/module_utils/network/os6.py: `os6_parse` makes a line matching one
  of its sub-level patterns (among them `^interface.*$` and `^vlan\\s[\\d,-]+.*$`) a parent of
  the lines after it until `exit`; a blank or comment line (`!`, `#`, ...: netcommon's
  DEFAULT_COMMENT_TOKENS) ends every open block; `NetworkConfig._diff_line` keeps every
  candidate line absent from the running config, and an `exit` whose block has a kept line.
- ansible-collections/ansible.netcommon at 3c1482f, plugins/module_utils/network/common/
  config.py: `ConfigLine.__eq__` compares `line`, the parents' texts and the line's own text
  joined by spaces (so a line matches in any position, under the same parents);
  `NetworkConfig.difference` puts each kept line's parents before it unless they were just
  sent for the previous line; `dumps(..., 'commands')` emits each item's stripped text.

Only the sub-level patterns vlanroute's files use are modelled (interface, vlan).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re

SUBLEVEL = (re.compile(r"^interface.*$"), re.compile(r"^vlan\s[\d,-]+.*$"))
COMMENT_TOKENS = ("#", "!", "/*", "*/", "echo")


@dataclass
class Item:
    text: str
    parents: list[Item] = field(default_factory=list)

    @property
    def key(self) -> str:
        return " ".join([p.text for p in self.parents] + [self.text])


def parse(text: str) -> list[Item]:
    items: list[Item] = []
    open_blocks: list[Item] = []
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith(COMMENT_TOKENS):
            open_blocks = []
            continue
        if any(p.match(line) for p in SUBLEVEL):
            item = Item(line, list(open_blocks))
            open_blocks.append(item)
        elif line == "exit":
            item = Item(line, list(open_blocks))
            if open_blocks:
                open_blocks.pop()
        else:
            item = Item(line, list(open_blocks))
        items.append(item)
    return items


def _keys(items: list[Item]) -> list[str]:
    return [i.key for i in items]


def commands(candidate_text: str, running_text: str) -> list[str]:
    """The lines os6_config would send for `src: candidate` against this running config."""
    running = {i.key for i in parse(running_text)}
    kept: list[Item] = []
    for item in parse(candidate_text):
        if item.text == "exit":
            # kept when a kept line has the same parents, or is one of them
            if any((k.parents and _keys(k.parents) == _keys(item.parents))
                   or (not k.parents and k.key in _keys(item.parents)) for k in kept):
                kept.append(item)
        elif item.key not in running:
            kept.append(item)
    out: list[str] = []
    sent: set[int] = set()
    previous: Item | None = None
    for item in kept:
        moved = previous is not None and item.parents and previous.parents and \
            previous.parents[0].key != item.parents[0].key
        for parent in item.parents:
            if id(parent) not in sent or moved:
                sent.add(id(parent))
                out.append(parent.text)
        out.append(item.text)
        sent.add(id(item))
        previous = item
    return out
