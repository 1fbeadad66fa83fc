"""Pre-flight facts of a Dell PowerConnect 62xx / OS6 switch: model, firmware, port list.

62xx firmware 3.x: `show version` prints only the image table, no model [FS]; the model and
firmware are in the running config's header, `!System Description "PowerConnect 6248,
3.3.7.3, VxWorks 6.5"` and `!System Software Version 3.3.7.3` (real 6248, 6224 and 8024F
captures [A], [B], [8024F]); if the header is missing, `show system` `Machine Type` [OXI],
[ASMF]. OS6: `show version` gives `System Model ID`, `Machine Type` and a unit table whose
`current-active` column is the running firmware [NPD], [OS6F]. The port list of both is
the first column of `show interfaces status` [8024F], [NPD].
"""

from __future__ import annotations

import re

from vlanroute.drivers.family import ShowCommand, SwitchFacts

_DESCRIPTION = re.compile(r'^!System Description "([^",]+),\s*([^",]+)', re.MULTILINE)
_SOFTWARE = re.compile(r"^!System Software Version (\S+)", re.MULTILINE)
_MACHINE = re.compile(r"^\s*Machine Type[.: ]+\s*(\S.*?)\s*$", re.MULTILINE)
_MODEL_ID = re.compile(r"^\s*System Model ID[.: ]+\s*(\S.*?)\s*$", re.MULTILINE)
_PORT_62XX = re.compile(r"^\s*(\d+/x?g\d+)\s", re.MULTILINE)
_PORT_OS6 = re.compile(r"^\s*((?:Te|Gi|Fo|Tw)\d+/\d+/\d+)\s", re.MULTILINE)


def _ports(text: str, pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    found = tuple(dict.fromkeys(pattern.findall(text)))
    return found or None


def facts_62xx(running_config: str, show: ShowCommand) -> SwitchFacts:
    sources: dict[str, str] = {}
    model = firmware = None
    if m := _DESCRIPTION.search(running_config):
        model, firmware = m.group(1).strip(), m.group(2).strip()
        sources["model"] = sources["firmware"] = "the running config's !System Description"
    if m := _SOFTWARE.search(running_config):
        firmware = m.group(1)
        sources["firmware"] = "the running config's !System Software Version"
    if model is None and (m := _MACHINE.search(show("show system"))):
        model = m.group(1)
        sources["model"] = "show system (Machine Type)"
    ports = _ports(show("show interfaces status"), _PORT_62XX)
    if ports:
        sources["ports"] = "show interfaces status"
    return SwitchFacts(model=model, firmware=firmware, ports=ports, sources=sources)


def facts_os6(running_config: str, show: ShowCommand) -> SwitchFacts:
    sources: dict[str, str] = {}
    version = show("show version")
    model = firmware = None
    if m := _MACHINE.search(version) or _MODEL_ID.search(version):
        model = m.group(1)
        sources["model"] = "show version (Machine Type)"
    # The unit table: `unit active backup current-active next-active`, unit 1 first.
    for line in version.splitlines():
        cells = line.split()
        if len(cells) == 5 and cells[0] == "1" and re.fullmatch(r"\d+(\.\d+)+", cells[3]):
            firmware = cells[3]
            sources["firmware"] = "show version (current-active of unit 1)"
            break
    if firmware is None and (m := _SOFTWARE.search(running_config)):
        firmware = m.group(1)
        sources["firmware"] = "the running config's !System Software Version"
    ports = _ports(show("show interfaces status"), _PORT_OS6)
    if ports:
        sources["ports"] = "show interfaces status"
    return SwitchFacts(model=model, firmware=firmware, ports=ports, sources=sources)
