"""Debounce: a port (or a switch's reachability) counts as changed only when the change lasts.

Every key (a switch port; a switch) has a state that counts, `up` or not, and the
observations of each poll round. A key that counts as up counts as down once it has been
seen down in `polls` rounds in a row **and** for `down_s` seconds; one observation of up in
between starts the count again (and is counted as a flap). A key that counts as down counts
as up again once it has been seen up for `hold_down_s` seconds (and `polls` rounds); one
observation of down starts the hold-down again. A round that could not read a key (its
switch did not answer) neither advances nor resets its count.

Pure: time is passed in (`at`, seconds of a monotonic clock), so the rules are tested
without waiting (tests/test_watch_debounce.py).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

Key = tuple[str, str]           # (switch, port); the watcher adds ("", switch) for its reachability
FLAP_WINDOW_S = 600.0           # flaps counted over the last ten minutes
FLAPS_REPORTED = 3              # this many flaps in the window: reported once as flapping


@dataclass
class KeyState:
    up: bool = True                     # the state that counts
    since: float | None = None          # start of the current run of contrary observations
    polls: int = 0                      # contrary observations in a row
    flaps: deque[float] = field(default_factory=deque)
    flapping: bool = False              # reported as flapping (until the window is quiet)
    last_seen: bool | None = None       # the last observation


@dataclass(frozen=True)
class Change:
    key: Key
    up: bool                            # the new state that counts
    after_s: float                      # since the first contrary observation


@dataclass
class Debouncer:
    polls: int
    down_s: float
    hold_down_s: float
    keys: dict[Key, KeyState] = field(default_factory=dict)

    def assume(self, keys: Iterable[Key], up: bool) -> None:
        """Start these keys in a state (a restarted watcher starts the ports it healed around
        as down: their return needs the hold-down like any other)."""
        for key in keys:
            self.keys[key] = KeyState(up=up)

    def state(self, key: Key) -> bool:
        return self.keys[key].up if key in self.keys else True

    def pending(self, key: Key) -> bool:
        """Seen contrary to its state, not confirmed yet."""
        k = self.keys.get(key)
        return k is not None and k.polls > 0

    def observe(self, key: Key, up: bool | None, at: float) -> Change | None:
        """One round's observation of `key` (None: not read); the change it confirms, if any."""
        k = self.keys.setdefault(key, KeyState())
        if up is None:
            return None
        k.last_seen = up
        if up == k.up:                          # as it counts: a contrary run ends here
            if k.polls:
                k.flaps.append(at)
            k.since, k.polls = None, 0
            self._forget_old_flaps(k, at)
            return None
        if k.polls == 0:
            k.since = at
        k.polls += 1
        assert k.since is not None
        lasted = at - k.since
        needed = self.down_s if k.up else self.hold_down_s
        if k.polls >= self.polls and lasted >= needed:
            k.up, k.polls, k.since = up, 0, None
            return Change(key, up, lasted)
        return None

    def flapping(self, at: float) -> list[Key]:
        """Keys that just reached FLAPS_REPORTED flaps in the window (each reported once until
        its window is quiet again)."""
        out = []
        for key, k in self.keys.items():
            self._forget_old_flaps(k, at)
            if len(k.flaps) >= FLAPS_REPORTED and not k.flapping:
                k.flapping = True
                out.append(key)
            elif not k.flaps:
                k.flapping = False
        return out

    @staticmethod
    def _forget_old_flaps(k: KeyState, at: float) -> None:
        while k.flaps and at - k.flaps[0] > FLAP_WINDOW_S:
            k.flaps.popleft()
