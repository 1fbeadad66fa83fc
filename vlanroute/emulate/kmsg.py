"""The kernel's log from a point on, read from /dev/kmsg (Documentation/ABI/testing/dev-kmsg):
what a failed emulation check shows beside its counters (a full conntrack table, a softirq
or clocksource complaint, a bond losing its members) without reading all of dmesg."""
from __future__ import annotations

import os


class KernelLog:
    """Opened at the end of the kernel's log buffer; `new()` returns the messages since then.
    Where /dev/kmsg cannot be read (no root, no such device), `new()` returns []."""

    def __init__(self, path: str = "/dev/kmsg") -> None:
        try:
            self.fd: int | None = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            os.lseek(self.fd, 0, os.SEEK_END)
        except OSError:
            self.fd = None

    def new(self, limit: int = 20) -> list[str]:
        """Up to the last `limit` messages logged since the last call (or the opening), as
        "[seconds since boot] text". Each read of /dev/kmsg returns one record,
        "priority,sequence,microseconds,flags;text", then EAGAIN when none is left."""
        if self.fd is None:
            return []
        lines: list[str] = []
        while True:
            try:
                record = os.read(self.fd, 8192)
            except BlockingIOError:
                break
            except BrokenPipeError:       # records overwritten before they were read: go on
                continue
            except OSError:
                break
            if not record:
                break
            head, _, text = record.decode(errors="replace").partition(";")
            fields = head.split(",")
            stamp = f"[{int(fields[2]) / 1e6:.3f}] " if len(fields) > 2 and fields[2].isdigit() else ""
            lines.append(stamp + text.splitlines()[0] if text else stamp)
        return lines[-limit:]

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
