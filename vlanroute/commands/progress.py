"""Progress on stderr for long work, only when stderr is a terminal (never in pipes, logs,
--json or --quiet runs).

- `CountsBar`: one bar across all switches of a push or audit, with how many switches are in
  each state (one bar per switch does not fit 256 switches).
- `phases`: a spinner with the current phase of plan or render, shown only once the work has
  taken more than a couple of seconds (a quick plan stays silent).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
import threading

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.status import Status

SPINNER_AFTER_S = 2.0


def wanted(console: Console, as_json: bool = False, quiet: bool = False) -> bool:
    return console.is_terminal and not as_json and not quiet


class CountsBar:
    """switches done / all, and `3 applying, 5 applied, 1 rolled-back`."""

    def __init__(self, label: str, console: Console | None, enabled: bool) -> None:
        self._progress = (Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                   TextColumn("{task.fields[counts]}"), TimeElapsedColumn(),
                                   console=console) if enabled and console is not None else None)
        self._task = self._progress.add_task(label, total=0, counts="") if self._progress else None
        self._state: dict[str, str] = {}
        self._done: set[str] = set()
        self._lock = threading.Lock()

    def __enter__(self) -> CountsBar:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def state(self, switch: str, state: str, done: bool = False) -> None:
        with self._lock:
            self._state[switch] = state
            if done:
                self._done.add(switch)
            if self._progress is not None and self._task is not None:
                counts = Counter(self._state.values())
                self._progress.update(self._task, total=len(self._state), completed=len(self._done),
                                      counts=", ".join(f"{n} {s}" for s, n in sorted(counts.items())))


class _Delayed:
    """A rich Status that appears only after SPINNER_AFTER_S seconds."""

    def __init__(self, console: Console, first: str) -> None:
        self._status = Status(first, console=console)
        self._text = first
        self._lock = threading.Lock()
        self._shown = False
        self._timer = threading.Timer(SPINNER_AFTER_S, self._show)
        self._timer.daemon = True

    def _show(self) -> None:
        with self._lock:
            if not self._shown:
                self._status.update(self._text)
                self._status.start()
                self._shown = True

    def phase(self, text: str) -> None:
        with self._lock:
            self._text = text
            if self._shown:
                self._status.update(text)

    def start(self) -> None:
        self._timer.start()

    def stop(self) -> None:
        self._timer.cancel()
        with self._lock:
            if self._shown:
                self._status.stop()
            self._shown = True       # a late timer must not start it again


class _Silent:
    def phase(self, text: str) -> None: ...


@contextmanager
def phases(first: str, enabled: bool, console: Console | None = None) -> Iterator[_Delayed | _Silent]:
    """`with phases("planning", enabled) as p: ...; p.phase("rendering")`."""
    if not enabled:
        yield _Silent()
        return
    spinner = _Delayed(console or Console(stderr=True), first)
    spinner.start()
    try:
        yield spinner
    finally:
        spinner.stop()
