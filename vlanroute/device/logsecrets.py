"""Python logging for every command (`vlanroute -v`, `--log-file`), with secrets masked.

Secrets are registered as they are read (device/credentials.py registers the SSH
password); a filter on every handler vlanroute installs replaces each one by ********
in the formatted message, whatever logger wrote it (vlanroute's own, netmiko's, paramiko's).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

MASK = "********"
_SECRETS: set[str] = set()
_LOCK = threading.Lock()
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def register_secret(value: str | None) -> None:
    """Never let `value` reach a log (empty and very short values would mask too much)."""
    if value and len(value) >= 3:
        with _LOCK:
            _SECRETS.add(value)


def mask(text: str) -> str:
    with _LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


class SecretFilter(logging.Filter):
    """Formats the record's message once, masked, so no handler sees the secret."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = mask(record.getMessage())
        record.msg, record.args = message, None
        if record.exc_info:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        if record.exc_text:
            record.exc_text = mask(record.exc_text)
        return True


def configure(verbosity: int, log_file: Path | None) -> None:
    """Console: warnings; -v info; -vv debug (vlanroute's loggers; netmiko and paramiko from
    -vvv). The log file (created 0600, appended to) always gets vlanroute's debug records."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_vlanroute", False):
            root.removeHandler(handler)
            handler.close()
    console_level = {0: logging.WARNING, 1: logging.INFO}.get(verbosity, logging.DEBUG)
    handlers: list[logging.Handler] = []
    console = logging.StreamHandler()
    console.setLevel(console_level)
    handlers.append(console)
    if log_file is not None:
        fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.close(fd)
        os.chmod(log_file, 0o600)
        to_file = logging.FileHandler(log_file, mode="a", encoding="utf-8")
        to_file.setLevel(logging.DEBUG)
        handlers.append(to_file)
    for handler in handlers:
        handler.setFormatter(logging.Formatter(FORMAT))
        handler.addFilter(SecretFilter())
        handler._vlanroute = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(logging.DEBUG if (log_file is not None or verbosity >= 2) else console_level)
    logging.getLogger("vlanroute").setLevel(logging.DEBUG)
    third = logging.DEBUG if verbosity >= 3 else logging.WARNING
    for name in ("netmiko", "paramiko", "asyncssh"):
        logging.getLogger(name).setLevel(third)
