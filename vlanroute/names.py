"""Defence in depth: re-check every value that reaches a switch CLI, a shell script or a
file name, right before it is rendered.

The inventory loader already validates names with strict patterns; the renderer checks
again because a plan.json can be edited by hand and a template must never be able to emit
`;`, quotes, spaces, `$`, backquotes or newlines into a CLI or shell.
Failures raise VerificationError: a valid inventory never produces them.
"""

from __future__ import annotations

import ipaddress
import re

from vlanroute.errors import VerificationError

# The strict patterns, in one place: the inventory (model/inventory.py) and the plan
# document (bundle/document.py) validate with them, and the renderer re-checks with them.
# Letters, digits and a few separators, starting with a letter: nothing a shell or a CLI
# treats specially (spaces, quotes, ;, $, `, |, &, <, >, newlines), no '/' and no leading
# dot, so a name is also a safe file name.
NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_.-]{0,62}$"
# Linux IFNAMSIZ is 16 with the NUL (include/uapi/linux/if.h), so at most 15 characters;
# the learning sub-interfaces have names of their own (PREFIX + VLAN id, `vr101`), so a NIC
# name need not leave room for ".4094". No dots (a dotted name needs the slash form in
# sysctl paths), nothing a shell treats specially.
IFNAME_MAX = 15
IFACE_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,14}$"
PORT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9/:.-]{0,31}$"
MAC_PATTERN = r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$"

# A switch's management address when it is a DNS name: an RFC 1123 host name (labels of
# letters, digits and '-', not starting or ending with '-', at most 63 characters, 253 in
# all), whose last label starts with a letter so that it can never look like an IPv4
# address (RFC 1123 section 2.1). Resolved when push or audit connect.
HOSTNAME_PATTERN = (r"^(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*"
                    r"[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
_HOSTNAME = re.compile(HOSTNAME_PATTERN)


def management_address(value: str) -> str:
    """An IP address (as Python writes it) or an RFC 1123 host name (as given); ValueError
    with the rule otherwise. Used by the inventory and the plan document alike."""
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        pass
    if _HOSTNAME.fullmatch(value):
        return value
    raise ValueError(f"'{value[:80]}' is neither an IP address nor a host name (RFC 1123: letters, "
                     "digits and '-' in labels separated by dots, the last label starting with a letter, "
                     "e.g. sw1.mgmt.example.org)")


_NAME = re.compile(NAME_PATTERN)
_IFACE = re.compile(IFACE_PATTERN)
_PORT = re.compile(PORT_PATTERN)
_LAG_HASH = re.compile(r"[A-Za-z0-9_+-]{1,32}")


def name(value: object, what: str) -> str:
    """Switch and host names: also used as file names, so no '/', no leading dot or dash.
    Exactly the inventory's rule (NAME_PATTERN): a name the inventory accepts must render,
    and without '/' a name like `lab..x` is one file name, not a step up."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise VerificationError([f"{what}: unsafe name {value!r} (allowed: {_NAME.pattern})"])
    return value


def iface(value: object, what: str) -> str:
    if not isinstance(value, str) or not _IFACE.fullmatch(value):
        raise VerificationError([f"{what}: unsafe interface name {value!r} (allowed: {_IFACE.pattern})"])
    return value


def port(value: object, what: str, platform_ports: frozenset[str] | None = None) -> str:
    if not isinstance(value, str) or not _PORT.fullmatch(value):
        raise VerificationError([f"{what}: unsafe port name {value!r}"])
    if platform_ports is not None and value not in platform_ports:
        raise VerificationError([f"{what}: port {value!r} does not exist on this platform"])
    return value


def vid(value: object, what: str, lo: int = 2, hi: int = 4094) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise VerificationError([f"{what}: VLAN id {value!r} outside {lo}..{hi}"])
    return value


def integer(value: object, what: str, lo: int, hi: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise VerificationError([f"{what}: {value!r} is not an integer in {lo}..{hi}"])
    return value


def ip_address(value: object, what: str) -> str:
    try:
        return str(ipaddress.ip_address(str(value)))
    except ValueError:
        raise VerificationError([f"{what}: {value!r} is not an IP address"]) from None


def ipv4_network(value: object, what: str) -> ipaddress.IPv4Network:
    try:
        return ipaddress.IPv4Network(str(value))
    except ValueError:
        raise VerificationError([f"{what}: {value!r} is not an IPv4 network"]) from None


def token(value: object, what: str) -> str:
    """A platform keyword such as a LAG hash mode taken from a descriptor."""
    if not isinstance(value, str) or not _LAG_HASH.fullmatch(value):
        raise VerificationError([f"{what}: unsafe keyword {value!r}"])
    return value


NAME_MAX = 63          # the longest name NAME_PATTERN allows
_SPEC_SIZES = re.compile(r"^(?:.?[<>=^])?[+\- ]?z?#?0?(?P<width>\d*)[,_]?(?:\.(?P<precision>\d+))?")


def pattern_size_problem(pattern: str) -> str | None:
    """Why a name pattern (str.format with placeholders) could build a huge string before
    its result is checked, or None. `{n:0200000000d}` would build a 200-million-character
    name: every width and precision must fit a name, and no width may itself be a
    placeholder (`{n:{n}}`)."""
    import string
    try:
        fields = list(string.Formatter().parse(pattern))
    except ValueError as exc:
        return f"it is not a valid pattern ({exc})"
    if len(pattern) > 4 * NAME_MAX:
        return f"it has {len(pattern)} characters; a name has at most {NAME_MAX}"
    for _, name, spec, _ in fields:
        if name is None or not spec:
            continue
        if "{" in spec:
            return f"the format of {{{name}}} contains a placeholder"
        m = _SPEC_SIZES.match(spec)
        for part in ("width", "precision"):
            value = m.group(part) if m else None
            if value and (len(value) > 4 or int(value) > NAME_MAX):
                return (f"the {part} {value} in {{{name}:{spec}}} is longer than a name can be "
                        f"({NAME_MAX} characters)")
    return None
