"""Poll rounds: every switch's link states, read over SSH sessions kept open.

One round reads every switch at once (a thread per switch, `LinkReader` of
device/linkstate.py: `show interfaces status` or the family's equivalent) and hands the
results to `on_round`: per switch its ports (port -> up) or why it could not be read. A
round starts every `interval_s`, or at once when `poll_now()` is called (a syslog hint).
While a port has been seen down but does not count yet, rounds come faster (`fast_s`, the
watcher's choice), so that the debounce's reads are not an interval apart each.
A switch whose read of an earlier round has not returned yet (a hung session waits for the
command timeout) is reported as still reading, and not asked again until it answers: one
slow switch never holds up the others' rounds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from vlanroute.device.credentials import Credentials
from vlanroute.device.linkstate import LinkReader
from vlanroute.device.session import HostKeyPolicy
from vlanroute.device.targets import Target

Reading = dict[str, bool] | str           # port -> up, or why the switch could not be read
RoundHandler = Callable[[float, dict[str, Reading]], None]
ROUND_WAIT_S = 10.0                       # a round waits this long (at least) for its reads


class Poller:
    def __init__(self, targets: Sequence[Target], creds: Credentials, host_keys: HostKeyPolicy, interval_s: float,
                 on_round: RoundHandler, reader: Callable[..., Any] = LinkReader,
                 clock: Callable[[], float] = time.monotonic, fast_s: float | None = None) -> None:
        self.readers = {t.name: reader(t, creds, host_keys) for t in targets}
        self.interval_s = interval_s
        self.fast_s = fast_s if fast_s is not None else interval_s
        self.hurry = False                       # set by the watcher while a change is pending
        self.on_round = on_round
        self.clock = clock
        self.rounds = 0
        self._now = threading.Event()
        self._stop = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=max(1, min(len(self.readers), 32)), thread_name_prefix="watch-poll")
        self._busy: dict[str, Future[Reading]] = {}
        self._thread = threading.Thread(target=self._loop, name="watch-poller", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def poll_now(self) -> None:
        self._now.set()

    def stop(self) -> None:
        self._stop.set()
        self._now.set()
        self._thread.join(timeout=5)
        self._pool.shutdown(wait=False, cancel_futures=True)
        for name, reader in self.readers.items():
            future = self._busy.get(name)
            if future is None or future.done():     # a read still under way keeps its session
                reader.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            started = self.clock()
            results = self.round()
            if self._stop.is_set():
                break
            self.on_round(self.clock(), results)
            self._pause(started)

    def _pause(self, started: float) -> None:
        """Until the next round is due: the interval (shorter once the watcher hurries, which it
        decides after it has seen this round), or a poll_now()."""
        while not self._stop.is_set():
            gap = min(self.interval_s, self.fast_s) if self.hurry else self.interval_s
            remaining = gap - (self.clock() - started)
            if remaining <= 0 or self._now.wait(min(remaining, 0.1)):
                break
        self._now.clear()

    def round(self) -> dict[str, Reading]:
        """Read every switch not still busy with an earlier read; wait for them (up to the
        interval, at least ROUND_WAIT_S)."""
        self.rounds += 1
        for name, reader in self.readers.items():
            if name not in self._busy or self._busy[name].done():
                self._busy[name] = self._pool.submit(reader.read)
        wait(list(self._busy.values()), timeout=max(self.interval_s, ROUND_WAIT_S))
        out: dict[str, Reading] = {}
        for name, future in self._busy.items():
            if not future.done():
                out[name] = "still reading (the switch has not answered the last read yet)"
            elif future.exception() is not None:
                out[name] = f"read failed: {future.exception()}"
            else:
                out[name] = future.result()
        return out
