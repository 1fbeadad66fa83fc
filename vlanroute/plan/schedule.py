"""When hosts repeat the MAC-learning broadcast: an interval derived from the switches'
aging time with a safety margin, plus a random splay.

Rules (docs/render.md):
- worst case between two broadcasts of one host is interval + splay; that must be at most
  half the aging time, so an entry is refreshed at least twice before it can age out even
  if one run is lost;
- by default interval = aging / 4 (capped at one day) and splay = interval / 4 (capped
  at one hour), so that hosts x VLANs broadcasts do not all leave in the same second;
- the interval is rounded DOWN to a step cron can express (a divisor of 60 minutes, a
  divisor of 24 hours, or daily): running more often is always safe, less often is not.
"""

from __future__ import annotations

from dataclasses import dataclass

from vlanroute.errors import UserError

DAY = 86_400
HOUR = 3_600
_MINUTE_STEPS = (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)   # divisors of 60
_HOUR_STEPS = (1, 2, 3, 4, 6, 8, 12)                      # divisors of 24
# Fixed minute/hour offsets keep the jobs off the top of the hour where other cron jobs pile up.
_MINUTE_OFFSET = 7
_DAILY_HOUR = 3


@dataclass(frozen=True)
class Schedule:
    interval_s: int     # the step actually used (cron-expressible)
    splay_s: int        # each run waits a random 0..splay_s seconds first
    cron: str           # the five cron time fields


def cron_step(interval_s: int) -> tuple[int, str]:
    """The largest cron-expressible interval <= interval_s, and its five time fields."""
    if interval_s < 60:
        raise UserError(f"a refresh interval of {interval_s} s is shorter than cron's one minute",
                        field="settings.learning.interval", fix="use 60 s or more")
    if interval_s >= DAY:
        return DAY, f"{_MINUTE_OFFSET} {_DAILY_HOUR} * * *"
    if interval_s >= HOUR:
        hours = max(h for h in _HOUR_STEPS if h * HOUR <= interval_s)
        return hours * HOUR, f"{_MINUTE_OFFSET} {'*' if hours == 1 else f'*/{hours}'} * * *"
    minutes = max(m for m in _MINUTE_STEPS if m * 60 <= interval_s)
    return minutes * 60, "* * * * *" if minutes == 1 else f"*/{minutes} * * * *"


def schedule_for(aging_s: int, interval_s: int | None = None, splay_s: int | None = None) -> Schedule:
    """The refresh schedule for switches whose (shortest) aging time is aging_s seconds."""
    if interval_s is None:
        interval_s = min(aging_s // 4, DAY)
        if interval_s < 60:
            raise UserError(f"aging time {aging_s} s is too short for a cron refresh "
                            "(it needs at least 4 runs per aging period of at least 60 s each)",
                            field="settings.aging_time", fix="use an aging time of 240 s or more "
                            "(the platform maximum is the default and recommended)")
    step, cron = cron_step(interval_s)
    if splay_s is None:
        splay_s = min(step // 4, HOUR)
    if splay_s < 0:
        raise UserError(f"negative splay {splay_s}", field="settings.learning.splay", fix="use 0 or more seconds")
    if interval_s > step and 2 * (interval_s + splay_s) > aging_s:
        # Checked on the interval asked for, not the step it rounds down to: an interval
        # longer than the aging time is a mistake to name, not one to cap silently.
        raise UserError(f"a refresh interval of {interval_s:,} s (plus up to {splay_s} s splay) is longer than "
                        f"half the aging time ({aging_s:,} s): MAC entries would age out between refreshes",
                        field="settings.learning.interval",
                        fix=f"make interval + splay at most {aging_s // 2:,} s (or leave the interval out: "
                            "it then follows the aging time)")
    if 2 * (step + splay_s) > aging_s:
        raise UserError(f"refresh every {step} s plus up to {splay_s} s splay can leave a gap longer than "
                        f"half the aging time ({aging_s} s): MAC entries could age out",
                        field="settings.learning.interval",
                        fix=f"make interval + splay at most {aging_s // 2} s, or raise the aging time")
    return Schedule(step, splay_s, cron)
