"""Reading a file a user named, with limits: never a traceback, never a hang (docs/limits.md).

Every file vlanroute reads from the user (inventory, hosts CSV, --set values, plan.json,
manifest.json, targets, Ansible inventory, lab seeds) goes through `read_text_file`:
- regular files only: a FIFO would block the read forever, /dev/zero would fill memory;
  the file is opened with O_NONBLOCK so that opening a FIFO does not wait for a writer;
- a size cap, read as a cap (the file may grow while it is read);
- UTF-8, and the error never quotes the file's content (it may be /etc/shadow).
YAML is composed first and its aliases counted (`check_aliases`): an alias bomb is refused
before it is expanded. Parsed YAML and JSON go through `check_depth`: deeply nested input is refused with a
message, before the recursive validators see it (PyYAML's composer and json's decoder
recurse once per level and raise RecursionError; `parse_limited` catches that too).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from vlanroute.errors import UserError

MIB = 1 << 20
# Caps per kind of file (docs/limits.md). An inventory of 10,000 hosts is well under 4 MiB;
# a plan.json of a 32x32 torus with 4 hosts per switch is about 30 MiB.
INPUT_LIMIT = 16 * MIB         # inventory, hosts CSV, Ansible inventory, lab seed, targets
BUNDLE_LIMIT = 512 * MIB       # plan.json, manifest.json and other files of an OUTDIR
MAX_DEPTH = 64                 # nesting levels of YAML/JSON; vlanroute's own need fewer than 10
# Values YAML aliases may add to a document when expanded: far above what an inventory of
# 10,000 hosts sharing anchors needs, far below a billion-laughs document (8 levels of 9
# aliases each expand to 43 million).
MAX_ALIAS_NODES = 1_000_000


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes_file(path: Path | str, *, limit: int = INPUT_LIMIT, what: str = "file",
                    field: str | None = None, fix: str | None = None) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, or a UserError naming the file."""
    where = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UserError(f"no such file (the {what})", file=where, field=field, fix=fix or "check the path") from None
    except OSError as exc:
        raise UserError(f"cannot read the {what}: {exc.strerror}", file=where, field=field,
                        fix=fix or "check the path and its permissions") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UserError(f"the {what} is {_kind(mode)}, not a regular file", file=where, field=field,
                            fix=f"give the path of a regular file (the {what} itself)")
        chunks, total = [], 0
        while chunk := os.read(fd, min(MIB, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise UserError(f"the {what} is larger than {limit // MIB} MiB, the limit for it "
                                "(docs/limits.md)", file=where, field=field,
                                fix=f"give the right file; a {what} of that size is not one vlanroute wrote "
                                    "or expects")
    except OSError as exc:
        raise UserError(f"cannot read the {what}: {exc.strerror}", file=where, field=field,
                        fix=fix or "check the file") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_text_file(path: Path | str, *, limit: int = INPUT_LIMIT, what: str = "file",
                   field: str | None = None, fix: str | None = None) -> str:
    """`read_bytes_file` decoded as UTF-8; the error never quotes the content."""
    data = read_bytes_file(path, limit=limit, what=what, field=field, fix=fix)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"the {what} is not UTF-8 text (byte {exc.start} is not)", file=str(path),
                        field=field, fix=fix or f"give the {what} itself, saved as UTF-8 text") from None


def nesting_depth(value: Any, stop: int = MAX_DEPTH) -> int:
    """How deep lists and mappings nest in `value` (a scalar is 0); counting ends past `stop`.
    Iterative, so that it works on input deep enough to break a recursive walk. Only lists
    and mappings are queued: a 32x32 torus's plan holds millions of scalars."""
    nests = (dict, list, tuple)
    if not isinstance(value, nests):
        return 0
    deepest = 0
    todo: list[tuple[Any, int]] = [(value, 1)]
    while todo:
        node, depth = todo.pop()
        if depth > deepest:
            deepest = depth
            if deepest > stop:
                return deepest
        children = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        todo.extend((c, depth + 1) for c in children if isinstance(c, nests))
    return deepest


def check_depth(value: Any, where: str, field: str | None = None) -> Any:
    """`value` if it nests at most MAX_DEPTH levels, else a UserError."""
    if nesting_depth(value) > MAX_DEPTH:
        raise too_deep(where, field)
    return value


def too_deep(where: str, field: str | None = None) -> UserError:
    return UserError(f"lists or mappings nest more than {MAX_DEPTH} levels deep (docs/limits.md)",
                     file=where, field=field,
                     fix="no vlanroute file nests that deep: give the right file, or flatten the value")


def parse_limited(parse: Callable[[], Any], where: str, field: str | None = None) -> Any:
    """Run a recursive parser (json.loads, yaml.load) and check the depth of what it made:
    a RecursionError becomes the same UserError as a too deep result."""
    try:
        value = parse()
    except RecursionError:
        raise too_deep(where, field) from None
    return check_depth(value, where, field)


def load_json(text: str, where: str, field: str | None = None) -> Any:
    """json.loads with the depth limit; json.JSONDecodeError (a ValueError) passes through."""
    return parse_limited(lambda: json.loads(text), where, field)


def safe_quote(text: str, limit: int = 40) -> str | None:
    """`text` in quotes for a message if it is short printable ASCII without '$' or ':'
    (so never a password hash line), else None: the caller then describes it instead."""
    if len(text) <= limit and text.isascii() and text.isprintable() and not any(c in text for c in "$:"):
        return f"'{text}'"
    return None


def shown_line(line: str, limit: int = 120) -> str:
    """A line of a switch config for a message: quoted if it looks like one (its first word
    a keyword, printable ASCII, no '$'), else described. A file given by mistake, even
    /etc/shadow, must not end up quoted in an error message or a log."""
    text = line.strip()
    first = text.split(" ", 1)[0]
    if (len(text) <= limit and text.isascii() and text.isprintable() and "$" not in text
            and first.replace("-", "").replace("_", "").isalnum()):
        return repr(text)
    return "a line that is not shown (it does not look like a configuration line; is this the right file?)"


_OPEN_CLOSE = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def flow_depth(text: str) -> int:
    """How deep `[` and `{` nest in `text`, counted on the characters alone (quotes and
    comments are not told apart, so this is an upper bound for YAML flow collections).
    PyYAML's scanner takes time quadratic in that depth (10 s for 20,000 levels), so YAML
    is checked with this before it is parsed."""
    brackets = _NOT_BRACKET.sub("", text)
    if not brackets:
        return 0
    return max(0, max(itertools.accumulate(_OPEN_CLOSE[ord(c)] for c in brackets)))


def load_yaml_limited(loader: type[yaml.SafeLoader], text: str, where: str, field: str | None = None) -> Any:
    """`text` loaded with `loader` (a yaml.SafeLoader subclass) within the limits: flow
    brackets counted first (flow_depth); the document composed, then refused if its aliases
    expand too far (check_aliases) before anything is constructed; the RecursionError and
    the depth of the result as `parse_limited` does."""
    if flow_depth(text) > MAX_DEPTH:
        raise too_deep(where, field)

    def parse() -> Any:
        reader = loader(text)
        try:
            node = reader.get_single_node()
            if node is None:
                return None
            check_aliases(node, where, field)
            return reader.construct_document(node)
        finally:
            reader.dispose()
    return parse_limited(parse, where, field)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


_HUGE = 1 << 62          # an expanded size past any limit; keeps the sums small integers


def alias_expansion(root: yaml.Node) -> int | None:
    """How many nodes the aliases of a composed YAML document add when they are expanded
    (a node an alias names counts once more per alias), or None for an alias to a mapping
    or list that holds it (a recursive structure). PyYAML composes an alias as the same
    node object, so this is counted on the node graph, each node once: a billion-laughs
    document costs time linear in its text, not in what it would expand to."""
    size: dict[int, int] = {}
    entered: set[int] = set()
    todo: list[tuple[yaml.Node, bool]] = [(root, False)]
    while todo:
        node, done = todo.pop()
        key = id(node)
        if done:
            size[key] = min(1 + sum(size[id(c)] for c in _children(node)), _HUGE)
            entered.discard(key)
            continue
        if key in size:
            continue
        if key in entered:
            return None
        entered.add(key)
        todo.append((node, True))
        for child in _children(node):
            if id(child) in entered:
                return None
            if id(child) not in size:
                todo.append((child, False))
    return max(0, size.get(id(root), 0) - len(size))


def check_aliases(root: yaml.Node, where: str, field: str | None = None) -> None:
    """A UserError when the aliases (`*name`) of a composed YAML document would expand it
    by more than MAX_ALIAS_NODES nodes (an alias bomb), or form a loop."""
    added = alias_expansion(root)
    if added is None:
        raise UserError("a YAML alias ('*name') refers to a mapping or list that holds it (a loop)",
                        file=where, field=field,
                        fix="no vlanroute file needs a recursive structure: write the values out")
    if added > MAX_ALIAS_NODES:
        raise UserError(f"YAML aliases ('*name') expand this document by more than {MAX_ALIAS_NODES:,} "
                        "values (docs/limits.md)", file=where, field=field,
                        fix="no vlanroute file needs that many: write the values out, or give the right file")
