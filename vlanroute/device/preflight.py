"""Push's read-only pre-flight: is this the switch the plan was made for, and does its
firmware have the commands no public source confirms? (NAPALM's get_facts in spirit.)

Run on every switch before anything is changed, also by `push --dry-run`:
1. facts: model and firmware (62xx: the running config's `!System Description`; OS6:
   `show version`) against the platform's descriptor, and the port list (`show interfaces
   status`) against every port the plan names on the switch;
2. probes: for each command the family marks unconfirmed that this push would send, the
   CLI's context help (`words ?`) in the mode push would send it in. Entering that mode
   (`configure`, `interface ...`) changes nothing; the typed words are erased and followed
   by a guard word, so the only thing ever executed is an invalid command
   (vlanroute.device.session.SwitchSession.context_help). The help must offer the command,
   and the value push will give it where the help lists values or a range; a help that
   lists neither cannot confirm the value and stops the switch too.
A mismatch stops that switch, before any change, with the fact named.
"""

from __future__ import annotations

from dataclasses import dataclass
import re

from vlanroute.device.session import SwitchSession
from vlanroute.device.targets import Target
from vlanroute.drivers.family import LineRole, Probe, SwitchFacts


class PreflightMismatch(Exception):
    """The switch is not what the plan expects, or lacks a command push would send."""


@dataclass(frozen=True)
class ProbeResult:
    probe: Probe
    words: str
    value: str | None
    offered: bool | None               # None: the help's format did not say


def _summary(ports: tuple[str, ...]) -> str:
    return f"{ports[0]}..{ports[-1]} ({len(ports)} ports)" if len(ports) > 3 else ", ".join(ports)


def check_facts(target: Target, facts: SwitchFacts) -> None:
    """Raise PreflightMismatch unless model, firmware and ports match the plan."""
    p = target.platform
    where = f"switches.{target.name}.mgmt"
    if p.model_pattern:
        if facts.model is None:
            raise PreflightMismatch("the switch's model could not be read (no model in the running "
                                    "config's header, `show system` or `show version`)")
        if not re.fullmatch(p.model_pattern, facts.model, re.IGNORECASE):
            raise PreflightMismatch(
                f"the switch is a {facts.model} ({facts.sources.get('model')}), but the plan's "
                f"platform {p.name} is a {p.description}: plan it with the platform of that model, "
                f"or check that {where} is the right switch")
    if p.firmware_pattern:
        if facts.firmware is None:
            raise PreflightMismatch("the switch's firmware version could not be read")
        if not re.fullmatch(p.firmware_pattern, facts.firmware, re.IGNORECASE):
            raise PreflightMismatch(
                f"the switch runs firmware {facts.firmware} ({facts.sources.get('firmware')}), "
                f"which is not the firmware the platform {p.name} describes ({p.description})")
    if facts.ports is None:
        raise PreflightMismatch("the switch's port list could not be read (show interfaces status)")
    wanted = set(target.switch.ports) | set(target.switch.reserved_ports)
    missing = sorted(wanted - set(facts.ports), key=lambda x: (len(x), x))
    if missing:
        raise PreflightMismatch(
            f"port {', '.join(missing[:5])} of the plan is not on the switch ({facts.sources.get('ports')} "
            f"lists {_summary(facts.ports)}): plan it with the platform of that switch, or check "
            f"that {where} is the right switch")


def gather_facts(target: Target, session: SwitchSession, running_text: str) -> SwitchFacts:
    return target.family.facts(running_text, lambda cmd: session.run(cmd, check=False))


def _probe_sites(target: Target, commands: list[str]) -> list[tuple[Probe, list[str], str, str | None]]:
    """(probe, commands entering its mode, words typed, value) for each probe this push needs."""
    roles = [m.role for m in target.family.classify_push_lines(commands)]
    out = []
    for probe in target.family.probes:
        entered: str | None = None
        for cmd, role in zip(commands, roles):
            if role is LineRole.ENTER_PORTS:
                entered = cmd
            elif role in (LineRole.LEAVE, LineRole.END, LineRole.VLAN_TABLE):
                entered = None if role is not LineRole.VLAN_TABLE else "vlan"
                continue
            m = re.fullmatch(probe.sent, cmd)
            if not m or entered == "vlan":
                continue
            if probe.mode == "configure" and entered is not None:
                continue
            if probe.mode not in (None, "configure") and not (entered and re.fullmatch(probe.mode, entered)):
                continue
            value = m.groupdict().get("value")
            words = probe.words or (cmd[:m.start("value")].rstrip() if value else cmd)
            out.append((probe, ["configure"] + ([entered] if entered else []), words, value))
            break
    return out


def offered(help_text: str, value: str) -> bool | None:
    """Does a context-help listing offer `value`? Lines start with a keyword or `<lo-hi>`.
    None when it lists neither (a format not understood)."""
    ranges, words = [], []
    for line in help_text.splitlines():
        first = line.strip().split(" ", 1)[0] if line.strip() else ""
        if m := re.fullmatch(r"<(\d+)-(\d+)>", first):
            ranges.append((int(m.group(1)), int(m.group(2))))
        elif re.fullmatch(r"[A-Za-z][\w-]*", first):
            words.append(first)
    if value in words:
        return True
    if value.isdigit() and any(lo <= int(value) <= hi for lo, hi in ranges):
        return True
    if ranges or words:
        return False
    return None


def run_probes(target: Target, session: SwitchSession, commands: list[str]) -> list[ProbeResult]:
    """Ask the switch about every unconfirmed command this push sends; PreflightMismatch
    names the first one it does not offer."""
    results: list[ProbeResult] = []
    errors = [re.compile(p, re.MULTILINE) for p in target.family.cli.error_patterns] \
        if target.family.cli else []
    for probe, entry, words, value in _probe_sites(target, commands):
        session.run("end", check=False)
        try:
            for line in entry:
                session.run(line)
            text = session.context_help(words)
        finally:
            session.run("end", check=False)
        if any(e.search(text) for e in errors):
            first = next((l.strip() for l in text.splitlines() if l.strip().strip("^")), "")
            raise PreflightMismatch(f"{probe.command}: the switch does not know `{words}` in the mode "
                                    f"push sends it in ({' / '.join(entry)}); its context help "
                                    f"answers {first!r}")
        ok = offered(text, value) if value is not None else True
        if ok is None:
            # Going on would be a guess: the probe exists to confirm the value, not only the words.
            first = next((l.strip() for l in text.splitlines() if l.strip()), "(nothing)")
            raise PreflightMismatch(f"{probe.command}: the switch's context help for `{words}` lists "
                                    f"neither keywords nor a <lo-hi> range (it begins {first!r}), so "
                                    f"`{words} {value}` cannot be confirmed")
        if ok is False:
            listed = " ".join(l.strip().split(" ", 1)[0] for l in text.splitlines() if l.strip())
            raise PreflightMismatch(f"{probe.command}: the switch does not offer `{words} {value}` "
                                    f"(its context help lists: {listed})")
        results.append(ProbeResult(probe, words, value, ok))
    return results
