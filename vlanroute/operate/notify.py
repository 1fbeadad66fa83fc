"""The site's notify hook: a command run with the event as JSON on its standard input.

The command line (the policy's `notify`, model/operation.py) is split as a POSIX shell would
and run without a shell, in the background: the watcher never waits for it beyond its
start. Its environment is the watcher's, without the SSH password, plus

    VLANROUTE_EVENT       the event (healed, proposed, returned, needs-person, ...)
    VLANROUTE_FABRIC      the plan's name
    VLANROUTE_OUTDIR      the published bundle
    VLANROUTE_STATE_DIR   the fabric's state directory
    VLANROUTE_BUNDLE      the bundle the event is about (a repair, or OUTDIR), when there is one

A hook that cannot start, fails, or runs longer than TIMEOUT_S is logged
(`notify-failed`), never fatal.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import threading
from collections.abc import Callable, Mapping
from typing import Any

from vlanroute.device.credentials import ENV_PASSWORD

TIMEOUT_S = 60.0
SECRET_ENV = (ENV_PASSWORD,)


def hook_environment(extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in SECRET_ENV}
    env.update(extra)
    return env


class Notifier:
    def __init__(self, command: str | None, base_env: Mapping[str, str],
                 log: Callable[..., Any]) -> None:
        self.argv = shlex.split(command) if command else None
        self.base_env = dict(base_env)
        self.log = log
        self._threads: list[threading.Thread] = []

    def __call__(self, event: Mapping[str, Any], bundle: str | None = None) -> None:
        if self.argv is None:
            return
        env = hook_environment({**self.base_env, "VLANROUTE_EVENT": str(event.get("event", "")),
                                **({"VLANROUTE_BUNDLE": bundle} if bundle else {})})
        thread = threading.Thread(target=self._run, args=(dict(event), env), name="watch-notify", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _run(self, event: dict[str, Any], env: dict[str, str]) -> None:
        assert self.argv is not None
        try:
            done = subprocess.run(self.argv, input=json.dumps(event, default=str) + "\n", text=True, env=env,
                                  capture_output=True, timeout=TIMEOUT_S, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            self.log("notify-failed", for_event=event.get("event"), error=str(exc)[:300])
            return
        if done.returncode != 0:
            self.log("notify-failed", for_event=event.get("event"), exit_code=done.returncode,
                     stderr=done.stderr.strip()[-300:])

    def wait(self, timeout: float = TIMEOUT_S) -> None:
        """Let the hooks started so far finish (on the way out)."""
        for thread in self._threads:
            thread.join(timeout=timeout)
