"""The inventory's `operation` section: how the site runs the fabric once it is pushed.

`operation.watch` is the policy of `vlanroute watch` (docs/watch.md): what it heals by itself
(`auto`) or only proposes (`propose`), which failure classes it may heal, how often it reads
the link states and how long a change must last before it counts. The plan document carries
it unchanged (plan.json `operation`), so the watcher of a published OUTDIR reads the policy
the bundle was rendered with; the command line may override any field.

    operation:
      watch:
        policy: auto            # or propose (the default): write the repair, notify, push nothing
        heal: [pair, switch]    # the failure classes `auto` heals; others are proposed
        strategies: [failover, repair]  # pushed in this order (the default): failover where it applies
        interval_s: 5           # one link-state read of every switch per interval
        debounce_polls: 2       # a port counts as down after this many polls in a row ...
        debounce_s: 5           # ... and this many seconds
        hold_down_s: 300        # a returned port counts as up after this many seconds up
        notify: /usr/local/bin/page-oncall --fabric seed-torus   # run with the event on stdin
        syslog_listen: 127.0.0.1:5514   # optional: link-down syslog as an early hint

The notify hook is executed without a shell (the command line split as a POSIX shell
would, then run as an argument list): its first word must be an absolute path, and the line
holds printable characters only.
"""

from __future__ import annotations

import ipaddress
import shlex
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

HealClass = Literal["pair", "switch"]
# In the order the default applies them: the fast failover onto the plan's backup VLANs
# (skipped where the plan has none or it cannot cover the failure), then the balanced repair.
Strategy = Literal["failover", "repair"]
HEAL_CLASSES: tuple[HealClass, ...] = get_args(HealClass)
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)


def notify_command(value: str) -> str:
    """A hook command line: printable, at most 500 characters, split as a shell would, its
    first word an absolute path (a service has no useful PATH). ValueError otherwise."""
    if not value or len(value) > 500 or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError("the notify command must be one line of printable text, at most 500 characters")
    try:
        words = shlex.split(value)
    except ValueError as exc:
        raise ValueError(f"the notify command cannot be split into words: {exc}") from None
    if not words or not words[0].startswith("/"):
        raise ValueError("the notify command must start with an absolute path, e.g. /usr/local/bin/notify-oncall")
    return value


def listen_address(value: str) -> str:
    """`ADDRESS:PORT` (an IPv4 literal, or `[v6]:PORT`), or a bare port (then 127.0.0.1)."""
    text = value.strip()
    host, _, port = text.rpartition(":") if ":" in text else ("127.0.0.1", "", text)
    host = host.removeprefix("[").removesuffix("]")
    try:
        ipaddress.ip_address(host)
        number = int(port)
    except ValueError:
        raise ValueError(f"'{value[:80]}' is not ADDRESS:PORT (e.g. 127.0.0.1:5514, [::1]:5514, or 5514)") from None
    if not 1 <= number <= 65535:
        raise ValueError(f"port {number} is not 1-65535")
    return value


NotifyCommand = Annotated[str, AfterValidator(notify_command)]
ListenAddress = Annotated[str, AfterValidator(listen_address)]
Seconds = Annotated[float, Field(strict=True, ge=0, le=86_400)]


class WatchSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    policy: Literal["auto", "propose"] = "propose"
    heal: list[HealClass] = list(HEAL_CLASSES)
    strategies: Annotated[list[Strategy], Field(min_length=1)] = list(STRATEGIES)
    interval_s: Annotated[float, Field(strict=True, ge=0.2, le=3600)] = 5.0
    debounce_polls: Annotated[int, Field(strict=True, ge=1, le=100)] = 2
    debounce_s: Seconds = 5.0
    hold_down_s: Seconds = 300.0
    notify: NotifyCommand | None = None
    syslog_listen: ListenAddress | None = None
    audit: bool = True
    # A change that could not be pushed (the fabric busy, no loop-free transition, a
    # pre-flight failure) is tried again this many times, this far apart, then left to a person.
    retries: Annotated[int, Field(strict=True, ge=0, le=100)] = 3
    retry_s: Seconds = 60.0


class OperationSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    watch: WatchSpec | None = None
